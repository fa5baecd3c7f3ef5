/** Engines register here to be told that a campaign may have work now (created, resumed, reconnected). */
type Waker = (campaignId?: string) => void;

const holder = globalThis as unknown as { __gcsWakers?: Set<Waker> };
const wakers = (holder.__gcsWakers ??= new Set());

export function onDispatchWake(waker: Waker) {
  wakers.add(waker);
  return () => wakers.delete(waker);
}

export function wakeDispatch(campaignId?: string) {
  for (const w of wakers) w(campaignId);
}
