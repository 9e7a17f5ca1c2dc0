import { fireEvent, render, screen } from "@testing-library/react";
import { useRef, useState } from "react";
import { describe, expect, it, vi } from "vitest";
import { ConfirmDialog } from "./ConfirmDialog";
import { Modal } from "./Modal";

function Opener({ onClose = () => {} }: { onClose?: () => void }) {
  const [open, setOpen] = useState(false);
  const first = useRef<HTMLInputElement>(null);
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        open
      </button>
      {open && (
        <Modal
          labelledBy="t"
          testId="m"
          initialFocus={first}
          onClose={() => {
            onClose();
            setOpen(false);
          }}
        >
          <h3 id="t">Title</h3>
          <input aria-label="first" ref={first} />
          <button type="button">other</button>
        </Modal>
      )}
    </>
  );
}

describe("Modal", () => {
  it("is a native dialog named by its title, focuses the asked element, closes on Escape and gives the focus back", () => {
    const closed = vi.fn();
    render(<Opener onClose={closed} />);
    const opener = screen.getByRole("button", { name: "open" });
    opener.focus();
    fireEvent.click(opener);
    const dialog = screen.getByRole("dialog", { name: "Title" });
    expect(dialog.tagName).toBe("DIALOG");
    expect(dialog.hasAttribute("open")).toBe(true);
    expect(document.activeElement).toBe(screen.getByLabelText("first"));
    fireEvent.keyDown(screen.getByLabelText("first"), { key: "Escape" });
    expect(closed).toHaveBeenCalledTimes(1);
    expect(screen.queryByTestId("m")).toBeNull();
    expect(document.activeElement).toBe(opener);
  });
  it("closes through the caller on the dialog's cancel event (Escape in a browser)", () => {
    const closed = vi.fn();
    render(<Opener onClose={closed} />);
    fireEvent.click(screen.getByRole("button", { name: "open" }));
    const cancel = new Event("cancel", { cancelable: true });
    screen.getByTestId("m").dispatchEvent(cancel);
    expect(cancel.defaultPrevented).toBe(true);
    expect(closed).toHaveBeenCalledTimes(1);
  });
  it("ConfirmDialog opens with Cancel focused, so Enter destroys nothing", () => {
    render(
      <ConfirmDialog title="Revoke?" confirmLabel="Revoke" onConfirm={() => {}} onCancel={() => {}}>
        gone for good
      </ConfirmDialog>,
    );
    expect(screen.getByRole("dialog", { name: "Revoke?" })).toBeTruthy();
    expect(document.activeElement?.textContent).toBe("Cancel");
  });
});

describe("Modal's Tab", () => {
  it("wraps from the last control to the first and back with Shift+Tab", () => {
    render(<Opener />);
    fireEvent.click(screen.getByRole("button", { name: "open" }));
    const first = screen.getByLabelText("first");
    const last = screen.getByRole("button", { name: "other" });
    last.focus();
    fireEvent.keyDown(last, { key: "Tab" });
    expect(document.activeElement).toBe(first);
    fireEvent.keyDown(first, { key: "Tab", shiftKey: true });
    expect(document.activeElement).toBe(last);
  });
});
