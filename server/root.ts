import "./audit/record-denied";
import { auditRouter } from "./audit/router";
import { accountRouter } from "./auth/router";
import { campaignsRouter } from "./campaigns/router";
import { channelsRouter } from "./channels/router";
import { launchBuyersRouter } from "./groups/actions/buyers-router";
import { groupActionsRouter } from "./groups/actions/router";
import { integrationsRouter } from "./integrations/router";
import { launchLeadsRouter } from "./launches/funnel/leads-router";
import { launchStatsRouter } from "./launches/funnel/stats-router";
import { apiKeysRouter } from "./keys/router";
import { launchesRouter } from "./launches/router";
import { moderationRouter } from "./moderation/router";
import { membersRouter } from "./members/router";
import { partnerAppsRouter } from "./oauth/router";
import { overviewRouter } from "./overview/router";
import { partnerRouter } from "./partner/router";
import { segmentsRouter } from "./segments/router";
import { seriesRouter } from "./campaigns/series-router";
import { settingsRouter } from "./settings/router";
import { router } from "./trpc";
import { webhooksRouter } from "./webhooks/router";

export const appRouter = router({
  account: accountRouter,
  apiKeys: apiKeysRouter,
  campaigns: campaignsRouter,
  channels: channelsRouter,
  groupActions: groupActionsRouter,
  integrations: integrationsRouter,
  launches: launchesRouter,
  launchBuyers: launchBuyersRouter,
  launchLeads: launchLeadsRouter,
  launchStats: launchStatsRouter,
  moderation: moderationRouter,
  members: membersRouter,
  overview: overviewRouter,
  partner: partnerRouter,
  partnerApps: partnerAppsRouter,
  segments: segmentsRouter,
  series: seriesRouter,
  settings: settingsRouter,
  webhooks: webhooksRouter,
  // Last: the reference (/docs) lists tags in the order their paths come, and opens the first (Campaigns).
  audit: auditRouter,
});

export type AppRouter = typeof appRouter;
