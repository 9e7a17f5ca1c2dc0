import { useQuery } from "@tanstack/react-query";
import { Link, useParams } from "react-router-dom";
import { DownloadButton } from "../components/DownloadButton";
import { PtsReportView } from "../components/Pts/PtsReportView";
import { QueryState } from "../components/QueryState";
import { ptsCsv, ptsReportQuery } from "../queries/pts";
import { runQuery } from "../queries/runs";

/** /runs/:id/pts: a SNIA PTS run's report pages (docs/pts.md), with its CSV. */
export function PtsReportPage() {
  const { id = "" } = useParams();
  const run = useQuery(runQuery(id));
  const q = useQuery(ptsReportQuery(id));
  return (
    <div className="page">
      <p>
        <Link to={`/runs/${id}`}>← {run.data?.name ?? "the run"}</Link>
      </p>
      <h2>SNIA PTS report</h2>
      <QueryState isPending={q.isPending} error={q.error} />
      {q.data && (
        <>
          <DownloadButton
            fetchFile={async () => ({
              blob: new Blob([await ptsCsv(id)], { type: "text/csv" }),
              name: `iowatt-pts-${id}.csv`,
            })}
            label="Download CSV"
            title="the report's tables: verdict, rounds, window, window averages per element"
            testId="pts-csv"
          />
          <PtsReportView report={q.data} />
        </>
      )}
    </div>
  );
}
