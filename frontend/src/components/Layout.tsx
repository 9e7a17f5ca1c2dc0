import { useQueryClient } from "@tanstack/react-query";
import { NavLink, Outlet } from "react-router-dom";
import { clearToken } from "../lib/auth";

const NAV = [
  { to: "/", label: "Dashboard", end: true },
  { to: "/runs", label: "Runs", end: false },
  { to: "/runs/new", label: "New run", end: true },
  { to: "/agents", label: "Agents", end: false },
] as const;

export function Layout() {
  const qc = useQueryClient();
  return (
    <div className="shell">
      <header className="topbar">
        <span className="brand">
          io<strong>watt</strong>
        </span>
        <nav>
          {NAV.map((n) => (
            <NavLink key={n.to} to={n.to} end={n.end} className="navlink">
              {n.label}
            </NavLink>
          ))}
        </nav>
        <button
          type="button"
          className="btn btn-ghost"
          data-testid="logout"
          onClick={() => {
            clearToken();
            qc.clear();
          }}
        >
          Log out
        </button>
      </header>
      <main className="content">
        <Outlet />
      </main>
    </div>
  );
}
