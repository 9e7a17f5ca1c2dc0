import { QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { BrowserRouter } from "react-router-dom";
import { App } from "./App";
import { PageErrorBoundary } from "./components/PageErrorBoundary";
import { makeQueryClient } from "./queryClient";
import "./styles.css";

const root = document.getElementById("root");
if (!root) throw new Error("#root missing from index.html");

createRoot(root).render(
  <StrictMode>
    <QueryClientProvider client={makeQueryClient()}>
      <BrowserRouter>
        {/* the shell itself (Layout and each lazy page have their own, inside it) */}
        <PageErrorBoundary>
          <App />
        </PageErrorBoundary>
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
);
