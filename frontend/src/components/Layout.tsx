import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Suspense, useEffect, useRef, useState } from "react";
import { NavLink, Outlet, useLocation } from "react-router-dom";
import { clearToken } from "../lib/auth";
import { type Action, useCan } from "../lib/role";
import { logout, meQuery } from "../queries/auth";
import { serverVersionQuery } from "../queries/health";
import { PageErrorBoundary } from "./PageErrorBoundary";
import { TeamSwitcher } from "./Team/TeamSwitcher";

const NAV: readonly { to: string; label: string; end: boolean; needs?: Action }[] = [
  { to: "/", label: "Dashboard", end: true },
  { to: "/runs", label: "Runs", end: false },
  { to: "/runs/new", label: "New run", end: true, needs: "run.create" },
  { to: "/import", label: "Import", end: true, needs: "run.create" },
  { to: "/compare/devices", label: "Compare", end: false },
  { to: "/workloads", label: "Workloads", end: false },
  { to: "/views", label: "Views", end: false },
  { to: "/series", label: "Series", end: false },
  { to: "/campaigns", label: "Campaigns", end: false },
  { to: "/reviews", label: "Reviews", end: false },
];

/** Twelve entries wrapped onto two lines at 1440 px: the team's setup sits in one Settings menu. */
const SETTINGS: readonly { to: string; label: string }[] = [
  { to: "/agents", label: "Agents" },
  { to: "/settings/devices", label: "Devices" },
  { to: "/settings/environments", label: "Environments" },
  { to: "/settings/tokens", label: "API tokens" },
  { to: "/settings/alerts", label: "Alerts" },
  { to: "/shares", label: "Shared links" },
  { to: "/team", label: "Team" },
  { to: "/settings/account", label: "Account" },
];
/** Only instance administrators see this entry (the server refuses everyone else all the same). */
const INSTANCE_ADMIN = { to: "/admin/users", label: "Users (instance)" };

/** "Runs" covers /runs and /runs/:id but not the form at /runs/new, which has its own entry. */
function isActive(to: string, end: boolean, pathname: string): boolean {
  if (end || to === "/") return pathname === to;
  if (to === "/runs" && pathname === "/runs/new") return false;
  if (to === "/compare/devices" && pathname === "/compare") return true;
  return pathname === to || pathname.startsWith(`${to}/`);
}

/** The Settings menu: a <details> that closes on navigation, Escape and a click outside it. */
function SettingsMenu({ pathname }: { pathname: string }) {
  const ref = useRef<HTMLDetailsElement>(null);
  const me = useQuery(meQuery()).data;
  const entries = me?.is_instance_admin ? [...SETTINGS, INSTANCE_ADMIN] : SETTINGS;
  const active = entries.some((s) => isActive(s.to, false, pathname));
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new page closes the menu
  useEffect(() => {
    if (ref.current) ref.current.open = false;
  }, [pathname]);
  useEffect(() => {
    const close = (e: MouseEvent | KeyboardEvent) => {
      const menu = ref.current;
      if (!menu?.open) return;
      if (e instanceof KeyboardEvent ? e.key === "Escape" : !menu.contains(e.target as Node)) {
        menu.open = false;
      }
    };
    document.addEventListener("mousedown", close);
    document.addEventListener("keydown", close);
    return () => {
      document.removeEventListener("mousedown", close);
      document.removeEventListener("keydown", close);
    };
  }, []);
  return (
    <details className="navmenu" ref={ref} data-testid="settings-menu">
      <summary className={`navlink${active ? " active" : ""}`}>Settings</summary>
      <div className="navmenu-items">
        {entries.map((n) => (
          <NavLink
            key={n.to}
            to={n.to}
            className={() => `navlink${isActive(n.to, false, pathname) ? " active" : ""}`}
          >
            {n.label}
          </NavLink>
        ))}
      </div>
    </details>
  );
}

/** Below 768 px the header holds the brand and a Menu button; the navigation, the team switcher
 * and Log out open under it as one column (styles.css, "Phones"). */
export function Layout() {
  const qc = useQueryClient();
  const { pathname } = useLocation();
  const [leaving, setLeaving] = useState(false);
  const [menuOpen, setMenuOpen] = useState(false);
  const toggle = useRef<HTMLButtonElement>(null);
  const can = useCan();
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new page closes the phone menu
  useEffect(() => {
    setMenuOpen(false);
  }, [pathname]);
  // Escape closes the open menu and puts the focus back on its button.
  useEffect(() => {
    if (!menuOpen) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      setMenuOpen(false);
      toggle.current?.focus();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [menuOpen]);
  // The server ends the session first; the local token goes whatever it answers (offline,
  // already expired), so "Log out" always logs out of this browser.
  const onLogout = async () => {
    setLeaving(true);
    try {
      await logout();
    } catch {
      // nothing more to do: the token is dropped below
    } finally {
      clearToken();
      qc.clear();
      setLeaving(false);
    }
  };
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className={`topbar${menuOpen ? " menu-open" : ""}`}>
        <span className="brand">
          io<strong>watt</strong>
        </span>
        <button
          type="button"
          className="btn btn-ghost menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="app-menu"
          data-testid="menu-toggle"
          ref={toggle}
          onClick={() => setMenuOpen((o) => !o)}
        >
          <span aria-hidden="true">{menuOpen ? "✕" : "☰"}</span> Menu
        </button>
        <div className="topbar-menu" id="app-menu">
          <nav aria-label="Main">
            {NAV.filter((n) => !n.needs || can(n.needs)).map((n) => (
              <NavLink
                key={n.to}
                to={n.to}
                end={n.end}
                className={() => `navlink${isActive(n.to, n.end, pathname) ? " active" : ""}`}
              >
                {n.label}
              </NavLink>
            ))}
            <SettingsMenu pathname={pathname} />
          </nav>
          <TeamSwitcher />
          <button
            type="button"
            className="btn btn-ghost"
            data-testid="logout"
            disabled={leaving}
            onClick={onLogout}
          >
            {leaving ? "Logging out…" : "Log out"}
          </button>
        </div>
      </header>
      <main className="content" id="main">
        <PageErrorBoundary resetKey={pathname}>
          <Suspense fallback={<p className="muted">Loading…</p>}>
            <Outlet />
          </Suspense>
        </PageErrorBoundary>
      </main>
      <ServerVersion />
    </div>
  );
}

/** The footer: the server's version (CHANGELOG.md names what each one brought). */
function ServerVersion() {
  const v = useQuery(serverVersionQuery());
  if (!v.data) return null;
  return (
    <footer className="app-footer muted small" data-testid="server-version">
      iowatt {v.data}
    </footer>
  );
}
