import type { ReactNode } from "react";
import { Navigate, useLocation } from "react-router-dom";
import { useToken } from "../lib/auth";

/** Renders its children only with a session; otherwise goes to the login page and back. */
export function RequireAuth({ children }: { children: ReactNode }) {
  const token = useToken();
  const location = useLocation();
  if (!token) {
    const next = `${location.pathname}${location.search}`;
    return <Navigate to={`/login?next=${encodeURIComponent(next)}`} replace />;
  }
  return <>{children}</>;
}
