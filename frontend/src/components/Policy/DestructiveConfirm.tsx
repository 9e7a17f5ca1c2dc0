import { useEffect, useId, useRef, useState } from "react";
import { formatBytes } from "../../lib/format";
import { confirmationPhrase, confirmsDevice, type PolicyTarget } from "../../lib/policy";
import { Modal } from "../Modal";

/**
 * The second key of a destructive run (ADR 0009): the host marked the device destructive, and
 * the user types each device's model (or serial) exactly, as GitHub confirms a deletion. Only
 * `onConfirm` leads to `destructive: true` on the wire.
 */
export function DestructiveConfirm({
  targets,
  onConfirm,
  onCancel,
  pending = false,
}: {
  targets: PolicyTarget[];
  onConfirm: () => void;
  onCancel: () => void;
  pending?: boolean;
}) {
  const titleId = useId();
  const [typed, setTyped] = useState<string[]>(() => targets.map(() => ""));
  const [ok, setOk] = useState<boolean[]>(() => targets.map(() => false));
  const first = useRef<HTMLInputElement>(null);

  useEffect(() => {
    let live = true;
    Promise.all(targets.map((t, i) => confirmsDevice(t, typed[i] ?? ""))).then((r) => {
      if (live) setOk(r);
    });
    return () => {
      live = false;
    };
  }, [targets, typed]);

  const all = ok.length === targets.length && ok.every(Boolean);
  return (
    <Modal labelledBy={titleId} testId="destructive-dialog" initialFocus={first} onClose={onCancel}>
      <h3 id={titleId}>
        Destroy the data on {targets.length === 1 ? "this device" : "these devices"}?
      </h3>
      <div className="alert alert-error">
        This run writes to the raw block device
        {targets.length === 1 ? "" : "s"} below. Everything stored on{" "}
        {targets.length === 1 ? "it" : "them"} (partitions, file systems, data) will be overwritten
        and cannot be recovered.
      </div>
      {targets.map((t, i) => {
        const phrase = confirmationPhrase(t);
        return (
          <div key={t.path} className="confirm-device">
            <p>
              <span className="mono">{t.path}</span>
              {t.size_bytes != null && <> · {formatBytes(t.size_bytes)}</>}
              {t.model && <> · {t.model}</>}
            </p>
            <label className="field">
              <span>
                Type <strong className="mono">{phrase}</strong>
                {t.serial_sha256 ? " (or the device's serial number)" : ""} to confirm
              </span>
              <input
                ref={i === 0 ? first : undefined}
                autoComplete="off"
                spellCheck={false}
                value={typed[i] ?? ""}
                aria-label={`Confirm ${t.path}`}
                data-testid="destructive-input"
                data-ok={ok[i] ? "true" : "false"}
                onChange={(e) => {
                  const v = e.target.value;
                  setTyped((xs) => xs.map((x, j) => (j === i ? v : x)));
                }}
              />
            </label>
          </div>
        );
      })}
      <div className="actions">
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
        <button
          type="button"
          className="btn btn-destroy"
          disabled={!all || pending}
          onClick={onConfirm}
          data-testid="destructive-confirm"
        >
          {pending ? "Queueing…" : "I understand, overwrite the device"}
        </button>
      </div>
    </Modal>
  );
}
