"use client";

import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { useState, type ReactNode } from "react";
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
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
