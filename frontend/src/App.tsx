import { lazy, type ReactNode, Suspense } from "react";
import { Navigate, Route, Routes } from "react-router-dom";
import { Layout } from "./components/Layout";
import { PageErrorBoundary } from "./components/PageErrorBoundary";
import { RequireAuth } from "./components/RequireAuth";
import { Login } from "./routes/Login";
import { OidcCallback } from "./routes/OidcCallback";

// Pages load on demand: the login page does not pull in the charting library.
const Dashboard = lazy(() => import("./routes/Dashboard").then((m) => ({ default: m.Dashboard })));
const Agents = lazy(() => import("./routes/Agents").then((m) => ({ default: m.Agents })));
const Runs = lazy(() => import("./routes/Runs").then((m) => ({ default: m.Runs })));
const NewRun = lazy(() => import("./routes/NewRun").then((m) => ({ default: m.NewRun })));
const RunDetail = lazy(() => import("./routes/RunDetail").then((m) => ({ default: m.RunDetail })));
const PtsReportPage = lazy(() =>
  import("./routes/PtsReportPage").then((m) => ({ default: m.PtsReportPage })),
);
const Compare = lazy(() => import("./routes/Compare").then((m) => ({ default: m.Compare })));
const CompareDevices = lazy(() =>
  import("./routes/CompareDevices").then((m) => ({ default: m.CompareDevices })),
);
const Campaigns = lazy(() => import("./routes/Campaigns").then((m) => ({ default: m.Campaigns })));
const CampaignDetail = lazy(() =>
  import("./routes/Campaigns").then((m) => ({ default: m.CampaignDetail })),
);
const Environments = lazy(() =>
  import("./routes/settings/Environments").then((m) => ({ default: m.Environments })),
);
const Devices = lazy(() =>
  import("./routes/settings/Devices").then((m) => ({ default: m.Devices })),
);
const Alerts = lazy(() => import("./routes/settings/Alerts").then((m) => ({ default: m.Alerts })));
const Tokens = lazy(() => import("./routes/settings/Tokens").then((m) => ({ default: m.Tokens })));
const Team = lazy(() => import("./routes/Team").then((m) => ({ default: m.Team })));
const Invite = lazy(() => import("./routes/Invite").then((m) => ({ default: m.Invite })));
const ResetPassword = lazy(() =>
  import("./routes/ResetPassword").then((m) => ({ default: m.ResetPassword })),
);
const VerifyEmail = lazy(() =>
  import("./routes/VerifyEmail").then((m) => ({ default: m.VerifyEmail })),
);
const Account = lazy(() =>
  import("./routes/settings/Account").then((m) => ({ default: m.Account })),
);
const AdminUsers = lazy(() =>
  import("./routes/AdminUsers").then((m) => ({ default: m.AdminUsers })),
);
const Shared = lazy(() => import("./routes/Shared").then((m) => ({ default: m.Shared })));
const Shares = lazy(() => import("./routes/Shares").then((m) => ({ default: m.Shares })));
const Workloads = lazy(() => import("./routes/Workloads").then((m) => ({ default: m.Workloads })));
const WorkloadPage = lazy(() =>
  import("./routes/Workloads").then((m) => ({ default: m.WorkloadPage })),
);
const Views = lazy(() => import("./routes/Views").then((m) => ({ default: m.Views })));
const SeriesList = lazy(() => import("./routes/Series").then((m) => ({ default: m.Series })));
const SeriesPage = lazy(() => import("./routes/Series").then((m) => ({ default: m.SeriesPage })));
const Import = lazy(() => import("./routes/Import").then((m) => ({ default: m.Import })));
const Reviews = lazy(() => import("./routes/Reviews").then((m) => ({ default: m.Reviews })));
const ReviewDetail = lazy(() =>
  import("./routes/ReviewDetail").then((m) => ({ default: m.ReviewDetail })),
);
const ViewPage = lazy(() => import("./routes/Views").then((m) => ({ default: m.ViewPage })));

/** A lazily loaded page outside the app's shell (Layout wraps its own pages the same way): a
 * message and a Reload button if its chunk does not arrive or it throws, not a blank page. */
function Standalone({ children }: { children: ReactNode }) {
  return (
    <PageErrorBoundary>
      <Suspense fallback={<p className="muted">Loading…</p>}>{children}</Suspense>
    </PageErrorBoundary>
  );
}

export function App() {
  return (
    <Routes>
      <Route path="/login" element={<Login />} />
      {/* a share link: no login, no app shell (routes/Shared.tsx) */}
      <Route
        path="/s/:token"
        element={
          <Standalone>
            <Shared />
          </Standalone>
        }
      />
      <Route
        path="/invite/:token"
        element={
          <Standalone>
            <Invite />
          </Standalone>
        }
      />
      <Route path="/login/oidc" element={<OidcCallback />} />
      {/* who owns an e-mail (docs/adr/0026): the links the server mails or an admin hands over */}
      <Route
        path="/reset-password"
        element={
          <Standalone>
            <ResetPassword />
          </Standalone>
        }
      />
      <Route
        path="/verify-email"
        element={
          <Standalone>
            <VerifyEmail />
          </Standalone>
        }
      />
      <Route
        element={
          <RequireAuth>
            <Layout />
          </RequireAuth>
        }
      >
        <Route index element={<Dashboard />} />
        <Route path="agents" element={<Agents />} />
        <Route path="runs" element={<Runs />} />
        <Route path="runs/new" element={<NewRun />} />
        <Route path="import" element={<Import />} />
        <Route path="runs/:id" element={<RunDetail />} />
        <Route path="runs/:id/pts" element={<PtsReportPage />} />
        <Route path="compare" element={<Compare />} />
        <Route path="compare/devices" element={<CompareDevices />} />
        <Route path="workloads" element={<Workloads />} />
        <Route path="workloads/:id" element={<WorkloadPage />} />
        <Route path="views" element={<Views />} />
        <Route path="views/:view" element={<ViewPage />} />
        <Route path="reviews" element={<Reviews />} />
        <Route path="reviews/:id" element={<ReviewDetail />} />
        <Route path="series" element={<SeriesList />} />
        <Route path="series/:id" element={<SeriesPage />} />
        <Route path="campaigns" element={<Campaigns />} />
        <Route path="campaigns/:id" element={<CampaignDetail />} />
        <Route path="settings/environments" element={<Environments />} />
        <Route path="settings/devices" element={<Devices />} />
        <Route path="settings/tokens" element={<Tokens />} />
        <Route path="settings/alerts" element={<Alerts />} />
        <Route path="settings/account" element={<Account />} />
        <Route path="admin/users" element={<AdminUsers />} />
        <Route path="shares" element={<Shares />} />
        <Route path="team" element={<Team />} />
        <Route path="*" element={<Navigate to="/" replace />} />
      </Route>
    </Routes>
  );
}
