import { type ReactNode, type RefObject, useEffect, useRef, useState } from "react";

const FOCUSABLE =
  "a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex='-1'])";

/**
 * Every modal of the app: a native `<dialog>` opened with showModal(), so the browser makes the
 * rest of the page inert (screen readers see only it; Tab wraps inside it) and draws the
 * backdrop. Escape closes it through `onClose` (the caller owns whether it is shown); when it goes, focus returns to the element that had it before it opened (the button that
 * opened it), as WAI-ARIA's dialog pattern asks.
 *
 * `initialFocus` names the element focused on opening (a Cancel button for a destructive action,
 * the first field of a form); without it the browser focuses the dialog's first focusable element.
 */
export function Modal({
  labelledBy,
  testId,
  className = "",
  initialFocus,
  onClose,
  children,
}: {
  labelledBy: string;
  testId: string;
  className?: string;
  initialFocus?: RefObject<HTMLElement | null>;
  onClose: () => void;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  // Read while rendering: the children's effects run before this component's and may move focus.
  const [opener] = useState<Element | null>(() =>
    typeof document === "undefined" ? null : document.activeElement,
  );
  const close = useRef(onClose);
  close.current = onClose;

  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (!d.open) {
      if (typeof d.showModal === "function") {
        try {
          d.showModal();
        } catch {
          d.setAttribute("open", "");
        }
      } else {
        d.setAttribute("open", ""); // jsdom has no showModal
      }
    }
    initialFocus?.current?.focus();
    // Escape fires "cancel", which would close the dialog behind React's back.
    const onCancel = (e: Event) => {
      e.preventDefault();
      close.current();
    };
    d.addEventListener("cancel", onCancel);
    return () => {
      d.removeEventListener("cancel", onCancel);
      if (d.open && typeof d.close === "function") d.close();
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    };
  }, [initialFocus, opener]);

  return (
    <dialog
      ref={ref}
      className={`dialog card ${className}`.trim()}
      aria-labelledby={labelledBy}
      aria-modal="true"
      data-testid={testId}
      onKeyDown={(e) => {
        if (e.key === "Escape") {
          e.preventDefault();
          e.stopPropagation();
          close.current();
        } else if (e.key === "Tab" && ref.current) {
          // The page behind is inert, but Tab past the last control would leave for the browser's
          // own UI: it wraps to the first (Shift+Tab before the first, to the last) instead.
          const all = [...ref.current.querySelectorAll<HTMLElement>(FOCUSABLE)].filter(
            (el) => !el.hasAttribute("disabled") && el.tabIndex >= 0,
          );
          const first = all[0];
          const last = all[all.length - 1];
          if (!first || !last) return;
          if (e.shiftKey && document.activeElement === first) {
            e.preventDefault();
            last.focus();
          } else if (!e.shiftKey && document.activeElement === last) {
            e.preventDefault();
            first.focus();
          }
        }
      }}
    >
      {children}
    </dialog>
  );
}
