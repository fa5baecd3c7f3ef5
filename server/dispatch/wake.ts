import { processWide } from "../process-state";

/**
 * Engines register here to be told that a campaign may have work now (created, resumed, reconnected).
 * With the campaign's id, its tenant and when it falls due (`due`): the in-process runner puts it on its
 * agenda without asking the database. Without an id (a channel reconnected), any campaign may be due.
 */
export interface WakeHint {
  tenantId: string;
  dueAt: Date;
}
type Waker = (campaignId?: string, due?: WakeHint) => void;

const wakers = processWide("dispatchWakers", () => new Set<Waker>());

export function onDispatchWake(waker: Waker) {
  wakers.add(waker);
  return () => wakers.delete(waker);
}

export function wakeDispatch(campaignId?: string, due?: WakeHint) {
  for (const w of wakers) w(campaignId, due);
}

/** Engines that keep a run per campaign (Inngest) register here to stop it when the user cancels. */
type CancelListener = (campaignId: string) => void;
const cancelListeners = processWide("cancelListeners", () => new Set<CancelListener>());

export function onCampaignCanceled(listener: CancelListener) {
  cancelListeners.add(listener);
  return () => cancelListeners.delete(listener);
}

export function notifyCampaignCanceled(campaignId: string) {
  for (const l of cancelListeners) l(campaignId);
}
