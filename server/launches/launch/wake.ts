import { processWide } from "../../process-state";

/**
 * The launch engine (reserve groups, invite-link checks) registers here to hear that a launch may need
 * work now (joins recorded, a launch created or edited). It also polls, so a missed call costs latency only.
 */
type Listener = (launchId: string) => void;
const listeners = processWide("launchWakers", () => new Set<Listener>());

export function onLaunchWake(listener: Listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function wakeLaunch(launchId: string) {
  for (const l of listeners) l(launchId);
}
