import { type ReactNode, useState } from "react";

/** Copies `text`; says so, or says to select it by hand where the clipboard is not available. */
function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [note, setNote] = useState<string | null>(null);
  return (
    <button
      type="button"
      className="btn btn-small"
      data-testid="copy"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setNote("copied");
        } catch {
          setNote("select and copy by hand");
        }
      }}
    >
      {note ?? label}
    </button>
  );
}

/**
 * A secret the server shows once (an enrolment or API token): the value with a copy button,
 * a warning that it will not be shown again, and what to do with it.
 */
export function OnceSecret({
  title,
  secret,
  onDone,
  children,
}: {
  title: string;
  secret: string;
  onDone: () => void;
  children?: ReactNode;
}) {
  return (
    <div className="card secret" data-testid="once-secret">
      <h3>{title}</h3>
      <p className="alert alert-warn small">
        Copy it now: it is shown only once. Anyone who has it can use it until it expires or is
        revoked.
      </p>
      <div className="secret-row">
        <code className="secret-value" data-testid="secret-value">
          {secret}
        </code>
        <CopyButton text={secret} />
      </div>
      {children}
      <div className="actions">
        <button type="button" className="btn" onClick={onDone} data-testid="secret-done">
          Done
        </button>
      </div>
    </div>
  );
}

/** A shell command in a box with its own copy button. */
export function Command({ text, testId }: { text: string; testId?: string }) {
  return (
    <div className="secret-row">
      <pre className="command" data-testid={testId}>
        {text}
      </pre>
      <CopyButton text={text} />
    </div>
  );
}
