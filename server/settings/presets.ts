/**
 * The dashboard's presets for a number's budget and the pacing (CONTRACT §7 "Budgets": Seguro / Normal / Rápido).
 * Each fills every `number_health` field and the pacing fields of `dispatch_rates`; the values and the reasons
 * behind them are in docs/numbers.md#presets (one place here, read by the settings page).
 */
import type { Settings } from "./schema";

export interface NumberPreset {
  id: "safe" | "normal" | "fast";
  label: string;
  description: string;
  number_health: Settings["number_health"];
  dispatch_rates: Pick<Settings["dispatch_rates"], "min_dispatch_rate" | "max_dispatch_rate" | "dispatches_per_loop">;
}

export const numberPresets: readonly NumberPreset[] = [
  {
    id: "safe",
    label: "Seguro",
    description: "Números novos ou que já tiveram restrição: aquecimento de 14 dias, até 300 mensagens por dia, 20 s entre envios, 5 grupos criados por dia.",
    number_health: { daily_message_cap: 300, warmup_days: 14, warmup_first_day_cap: 20, min_send_gap_seconds: 20, group_create_cap: 5 },
    dispatch_rates: { min_dispatch_rate: 20, max_dispatch_rate: 60, dispatches_per_loop: 1 },
  },
  {
    id: "normal",
    label: "Normal",
    description: "Números com algumas semanas de uso: aquecimento de 7 dias, até 1.000 mensagens por dia, 8 s entre envios, 10 grupos por dia.",
    number_health: { daily_message_cap: 1000, warmup_days: 7, warmup_first_day_cap: 50, min_send_gap_seconds: 8, group_create_cap: 10 },
    dispatch_rates: { min_dispatch_rate: 8, max_dispatch_rate: 20, dispatches_per_loop: 1 },
  },
  {
    id: "fast",
    label: "Rápido",
    description:
      "Números antigos e já aquecidos, com vários números por grupo: sem limite diário, 3 s entre envios, 20 grupos por dia. Mais risco de bloqueio.",
    number_health: { daily_message_cap: null, warmup_days: 0, warmup_first_day_cap: 50, min_send_gap_seconds: 3, group_create_cap: 20 },
    dispatch_rates: { min_dispatch_rate: 3, max_dispatch_rate: 8, dispatches_per_loop: 1 },
  },
];

/** The preset the settings match exactly, if any (the page marks it). */
export function matchingPreset(settings: Pick<Settings, "number_health" | "dispatch_rates">): NumberPreset | undefined {
  return numberPresets.find(
    (p) =>
      (Object.keys(p.number_health) as (keyof Settings["number_health"])[]).every((k) => settings.number_health[k] === p.number_health[k]) &&
      (Object.keys(p.dispatch_rates) as (keyof NumberPreset["dispatch_rates"])[]).every((k) => settings.dispatch_rates[k] === p.dispatch_rates[k]),
  );
}
