import { useEffect, useState } from "react";
import { formatRelative } from "../lib/format";

/** When the next text of formatRelative(iso) is due: each second under a minute's age, each minute
 * under an hour, then each hour (a day's text changes at most that often too). */
export function nextAgoChangeMs(iso: string, now: number): number {
  const age = Math.abs(now - new Date(iso).getTime());
  const step = age < 60_000 ? 1_000 : age < 3_600_000 ? 60_000 : 3_600_000;
  return step - (age % step);
}

/** "3 min ago" that stays true on a page left open: it draws itself again when its text changes,
 * not when the page does (an active run's page is no longer drawn again at each poll). */
export function Ago({ iso }: { iso: string | null | undefined }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!iso || Number.isNaN(new Date(iso).getTime())) return;
    const timer = setTimeout(() => setNow(Date.now()), nextAgoChangeMs(iso, now) + 50);
    return () => clearTimeout(timer);
  }, [iso, now]);
  return <>{formatRelative(iso, now)}</>;
}
