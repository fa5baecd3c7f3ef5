"use client";

import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { useEffect, useState, type ReactNode } from "react";
import type { AppRouter } from "@/server/root";
import { isSessionError } from "./_lib/errors";
import { TRPCProvider } from "./_lib/trpc";

/** A session that expired while a page was open: back to the login, then back here. */
function onSessionLost(error: unknown) {
  if (!isSessionError(error) || typeof window === "undefined") return;
  const here = window.location.pathname + window.location.search;
  if (window.location.pathname !== "/login") window.location.assign(`/login?callbackUrl=${encodeURIComponent(here)}`);
}

function makeQueryClient() {
  return new QueryClient({
    queryCache: new QueryCache({ onError: onSessionLost }),
    mutationCache: new MutationCache({ onError: onSessionLost }),
    defaultOptions: {
      queries: {
        staleTime: 10_000,
        retry: (failures, error) => !isSessionError(error) && failures < 2,
      },
    },
  });
}

let browserQueryClient: QueryClient | undefined;

/** One client per request on the server (no leaks between users), one for the life of the tab in the browser. */
function getQueryClient() {
  if (typeof window === "undefined") return makeQueryClient();
  browserQueryClient ??= makeQueryClient();
  return browserQueryClient;
}

export function Providers({ children }: { children: ReactNode }) {
  const queryClient = getQueryClient();
  const [trpcClient] = useState(() => createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: "/api/trpc" })] }));
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        <HydrationGate>{children}</HydrationGate>
      </TRPCProvider>
    </QueryClientProvider>
  );
}

/**
 * Every form control of the page stays disabled until React has hydrated it: a click before then would
 * submit a form natively (a GET of the page with the fields in the URL) and typing would be lost when the
 * controlled inputs take over. A fieldset shown as `display: contents` adds no box and disables only controls
 * (links work at once); browser tests wait for the controls to be enabled, as a person would.
 */
function HydrationGate({ children }: { children: ReactNode }) {
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  return (
    <fieldset className="hydration-gate" disabled={!hydrated}>
      {children}
    </fieldset>
  );
}
