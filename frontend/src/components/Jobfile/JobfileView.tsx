import { groupsOf, type JobfileParse, optionsText, ownOptions } from "./jobfile";
import "./jobfile.css";

/** The jobs the engine makes of a job file, group by group (jobs of a group start together),
 * and the filename / directory options the run's target replaces. */
export function JobfileJobs({ parse }: { parse: JobfileParse }) {
  const global = optionsText(parse.global_options);
  return (
    <div data-testid="jobfile-jobs">
      {global && (
        <p className="small">
          <strong>[global]</strong> <code>{global}</code>
        </p>
      )}
      <table className="table compact">
        <thead>
          <tr>
            <th>Group</th>
            <th>Job</th>
            <th className="num">Line</th>
            <th>Its options</th>
          </tr>
        </thead>
        <tbody>
          {groupsOf(parse).flatMap((g) =>
            g.jobs.map((j, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: fio allows two sections of one name
              <tr key={`${g.group}-${j.name}-${i}`} data-testid="jobfile-job">
                <td className="num">{i === 0 ? g.group : ""}</td>
                <td>{j.name}</td>
                <td className="num">{j.line ?? ""}</td>
                <td>
                  <code>{optionsText(ownOptions(parse, j)) || "—"}</code>
                </td>
              </tr>
            )),
          )}
        </tbody>
      </table>
      {parse.replaced.length > 0 && (
        <p className="small muted" data-testid="jobfile-replaced">
          Replaced by the run's target, never followed: {parse.replaced.join("; ")}
        </p>
      )}
    </div>
  );
}

/** A job file as it was given (byte for byte, whitespace and comments kept), and its jobs. */
export function JobfileSpecCard({
  text,
  parse,
}: {
  text: string;
  parse: JobfileParse | null | undefined;
}) {
  return (
    <div className="card" data-testid="jobfile-spec">
      <h2 style={{ marginTop: 0 }}>fio job file</h2>
      <pre className="jobfile-text" data-testid="jobfile-text">
        {text}
      </pre>
      {parse && <JobfileJobs parse={parse} />}
    </div>
  );
}
