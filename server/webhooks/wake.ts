import { processWide } from "../process-state";

/** The webhook engine registers here to hear that events were recorded (it also polls, so a missed call costs latency only). */
type Listener = () => void;
const listeners = processWide("webhookWakers", () => new Set<Listener>());

export function onWebhookWake(listener: Listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function wakeWebhooks() {
  for (const l of listeners) l();
}
