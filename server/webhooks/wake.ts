/** The webhook engine registers here to hear that events were recorded (it also polls, so a missed call costs latency only). */
type Listener = () => void;
const holder = globalThis as unknown as { __gcsWebhookWakers?: Set<Listener> };
const listeners = (holder.__gcsWebhookWakers ??= new Set());

export function onWebhookWake(listener: Listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function wakeWebhooks() {
  for (const l of listeners) l();
}
