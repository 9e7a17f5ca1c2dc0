// The browser session: the bearer token from POST /auth/login, kept in localStorage so a
// reload stays logged in. A tiny external store lets React re-render when it changes
// (login, logout, or a 401 from any request).
import { useSyncExternalStore } from "react";

const KEY = "iowatt.token";
const listeners = new Set<() => void>();

export function getToken(): string | null {
  return localStorage.getItem(KEY);
}

export function setToken(token: string): void {
  localStorage.setItem(KEY, token);
  for (const l of listeners) l();
}

export function clearToken(): void {
  if (localStorage.getItem(KEY) === null) return;
  localStorage.removeItem(KEY);
  for (const l of listeners) l();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  const onStorage = (e: StorageEvent) => {
    if (e.key === KEY) listener();
  };
  window.addEventListener("storage", onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener("storage", onStorage);
  };
}

export function useToken(): string | null {
  return useSyncExternalStore(subscribe, getToken, () => null);
}
