import { accountRouter } from "./auth/router";
import { channelsRouter } from "./channels/router";
import { apiKeysRouter } from "./keys/router";
import { segmentsRouter } from "./segments/router";
import { router } from "./trpc";

export const appRouter = router({
  account: accountRouter,
  apiKeys: apiKeysRouter,
  channels: channelsRouter,
  segments: segmentsRouter,
});

export type AppRouter = typeof appRouter;
