import type { Db } from "../../../db/client";
import type { MessagingProvider } from "../../messaging/provider";
import { reportMembersChanged } from "../../groups/activity/group-activity";
import { checkInviteLinks } from "../link/invite-health";
import { checkTrafficAlerts } from "./traffic-alerts";

/**
 * One pass of the launches' periodic work, for both engines (the `launch-funnel` job of inngest/jobs/, in process and
 * Inngest cron): `members_changed` events for groups whose last one is old enough, then the invite
 * links due a check (each group every LAUNCH_INVITE_CHECK_SECONDS), then the traffic alerts (server/launches/funnel/traffic-alerts.ts).
 */
export async function runFunnelJobs(db: Db, provider: Pick<MessagingProvider, "groupState" | "inviteUrl" | "ownNumber">, now: Date) {
  const reported = await reportMembersChanged(db, now);
  const invites = await checkInviteLinks(db, provider, now);
  const trafficAlerts = await checkTrafficAlerts(db, now);
  return { reported, ...invites, trafficAlerts };
}
