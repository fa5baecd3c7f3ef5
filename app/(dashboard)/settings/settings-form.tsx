"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent, type ReactNode } from "react";
import { ChoiceList, ErrorAlert, Field, Loading, PageHeader } from "../../_components/ui";
import { useTRPC } from "../../_lib/trpc";
import { useCan } from "../role-context";
import { ScheduleEditor } from "./schedule-editor";
import { TestGroupsEditor } from "./test-groups-editor";
import { buildPatch, fieldErrors, labelFor, settingsLimits, type Settings } from "./settings-fields";
import { matchingPreset, numberPresets } from "@/server/settings/presets";
import { numberHealthLimits } from "@/server/settings/schema";

type Section<K extends keyof Settings> = Settings[K];

const queueModes: { value: Settings["queue"]["concurrent_mode"]; label: string; help: string }[] = [
  {
    value: "disabled",
    label: "Uma campanha por vez",
    help: "As campanhas da conta fazem fila e saem na ordem do horário de início. É o modo mais seguro contra bloqueios.",
  },
  {
    value: "per_channel",
    label: "Uma por canal",
    help: "Campanhas de canais diferentes enviam ao mesmo tempo; no mesmo canal, uma de cada vez.",
  },
  {
    value: "enabled",
    label: "Sem fila",
    help: "Todas as campanhas enviam ao mesmo tempo, assim que chega a hora de cada uma. Mais rápido, com mais risco de bloqueio.",
  },
];

/** The number_health fields that are plain numbers (the daily cap, which may be "none", has its own field); labels from labelFor. */
const healthFields: { field: "warmup_days" | "warmup_first_day_cap" | "min_send_gap_seconds" | "group_create_cap"; unit: string; integer: boolean }[] = [
  { field: "warmup_days", unit: "dias", integer: true },
  { field: "warmup_first_day_cap", unit: "mensagens", integer: true },
  { field: "min_send_gap_seconds", unit: "segundos", integer: false },
  { field: "group_create_cap", unit: "grupos", integer: true },
];

export function SettingsForm() {
  // Settings are an admin's (docs/team.md#roles): an editor or a viewer reads them, the fields disabled and no save bar.
  const canEdit = useCan("admin");
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const query = useQuery(trpc.settings.get.queryOptions());
  // Edits live here until saved; null = showing exactly what the server has.
  const [draft, setDraft] = useState<Settings | null>(null);
  const [saved, setSaved] = useState<string[] | null>(null);
  const edit = useMutation(
    trpc.settings.edit.mutationOptions({
      onSuccess: (result) => {
        queryClient.setQueryData(trpc.settings.get.queryKey(), { success: true as const, settings: result.settings });
        setDraft(null);
        setSaved(result.updated);
      },
    }),
  );

  if (query.isPending) return <Loading />;
  if (query.error) return <ErrorAlert error={query.error} />;

  const server = query.data.settings;
  const s = draft ?? server;
  const patch = buildPatch(server, s);
  const dirty = Object.keys(patch).length > 0;
  const errors = fieldErrors(edit.error);
  const invalid = (path: string) => errors.some((e) => e.path === path || e.path.startsWith(`${path}.`));

  function set<K extends keyof Settings>(section: K, changes: Partial<Section<K>>) {
    setSaved(null);
    setDraft({ ...s, [section]: { ...s[section], ...changes } });
  }
  const rates = (changes: Partial<Section<"dispatch_rates">>) => set("dispatch_rates", changes);
  const prefs = (changes: Partial<Section<"preferences">>) => set("preferences", changes);
  const schedule = (changes: Partial<Section<"sending_schedule">>) => set("sending_schedule", changes);
  const health = (changes: Partial<Section<"number_health">>) => set("number_health", changes);
  const preset = matchingPreset(s);

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    if (!dirty) return;
    setSaved(null);
    edit.mutate(patch);
  }
  function discard() {
    edit.reset();
    setSaved(null);
    setDraft(null);
  }

  const R = settingsLimits.dispatchRateSeconds;
  const I = settingsLimits.campaignIntervalSeconds;
  const L = settingsLimits.dispatchesPerLoop;
  const sch = s.sending_schedule;

  return (
    <>
      <PageHeader
        title="Configurações"
        description="Como e quando as campanhas da sua conta são enviadas. Valem para todas as campanhas, inclusive as já criadas."
      />
      {!canEdit && (
        <p className="alert" role="note">
          Somente proprietários e administradores da conta alteram as configurações; você pode consultá-las.
        </p>
      )}
      <form className="stack settings-form" onSubmit={onSubmit}>
        <fieldset className="stack" disabled={!canEdit}>
          <section className="card" aria-labelledby="rates-title">
            <h2 id="rates-title">Taxas de envio</h2>
            <p className="muted section-help">
              Cada campanha envia em ciclos: a cada ciclo, algumas mensagens; entre um ciclo e outro, uma pausa aleatória entre o mínimo e o máximo. Pausas
              maiores parecem mais naturais e reduzem o risco de bloqueio.
            </p>
            <div className="form-grid three">
              <NumberField
                label="Pausa mínima entre envios"
                unit="segundos"
                path="dispatch_rates.min_dispatch_rate"
                value={s.dispatch_rates.min_dispatch_rate}
                max={R}
                invalid={invalid}
                onChange={(v) => rates({ min_dispatch_rate: v })}
              />
              <NumberField
                label="Pausa máxima entre envios"
                unit="segundos"
                path="dispatch_rates.max_dispatch_rate"
                value={s.dispatch_rates.max_dispatch_rate}
                max={R}
                invalid={invalid}
                onChange={(v) => rates({ max_dispatch_rate: v })}
              />
              <NumberField
                label="Envios por ciclo"
                unit="mensagens"
                path="dispatch_rates.dispatches_per_loop"
                value={s.dispatch_rates.dispatches_per_loop}
                min={L.min}
                max={L.max}
                integer
                invalid={invalid}
                onChange={(v) => rates({ dispatches_per_loop: v })}
              />
              <NumberField
                label="Intervalo mínimo entre campanhas"
                unit="segundos"
                path="dispatch_rates.min_campaign_interval"
                value={s.dispatch_rates.min_campaign_interval}
                max={I}
                invalid={invalid}
                onChange={(v) => rates({ min_campaign_interval: v })}
              />
              <NumberField
                label="Intervalo máximo entre campanhas"
                unit="segundos"
                path="dispatch_rates.max_campaign_interval"
                value={s.dispatch_rates.max_campaign_interval}
                max={I}
                invalid={invalid}
                onChange={(v) => rates({ max_campaign_interval: v })}
              />
            </div>
            <p className="muted small">O intervalo entre campanhas é a espera entre o fim de uma campanha da fila e o início da próxima.</p>
          </section>

          <section className="card" aria-labelledby="health-title">
            <h2 id="health-title">Saúde dos números</h2>
            <p className="muted section-help">
              Limites de cada número (canal), valendo para todas as campanhas e lançamentos dele: o WhatsApp restringe e bane números que enviam demais, rápido
              demais ou que criam grupos demais. Cada canal pode ter limites próprios na página Canais.
            </p>
            <fieldset className="preset-list">
              <legend className="sr-only">Predefinições</legend>
              {numberPresets.map((p) => (
                <button
                  key={p.id}
                  type="button"
                  className={preset?.id === p.id ? "choice selected" : "choice"}
                  aria-pressed={preset?.id === p.id}
                  onClick={() => {
                    setSaved(null);
                    setDraft({ ...s, number_health: { ...p.number_health }, dispatch_rates: { ...s.dispatch_rates, ...p.dispatch_rates } });
                  }}
                >
                  <strong>{p.label}</strong>
                  <small className="muted">{p.description}</small>
                </button>
              ))}
            </fieldset>
            <p className="muted small">Uma predefinição preenche os campos abaixo e as pausas entre envios; nada muda até você salvar.</p>
            <div className="form-grid three">
              <Field
                label={labelFor("number_health.daily_message_cap")}
                hint={`de ${numberHealthLimits.daily_message_cap.min} a ${numberHealthLimits.daily_message_cap.max}, por dia de Brasília`}
              >
                {(c) => (
                  <span className="input-unit">
                    <input
                      {...c}
                      type="number"
                      inputMode="numeric"
                      min={numberHealthLimits.daily_message_cap.min}
                      max={numberHealthLimits.daily_message_cap.max}
                      step={1}
                      disabled={s.number_health.daily_message_cap === null}
                      value={s.number_health.daily_message_cap ?? ""}
                      aria-invalid={invalid("number_health.daily_message_cap") || undefined}
                      onChange={(e) => health({ daily_message_cap: e.target.value === "" ? Number.NaN : Number(e.target.value) })}
                    />
                    <span className="muted" aria-hidden="true">
                      mensagens
                    </span>
                  </span>
                )}
              </Field>
              {healthFields.map(({ field, unit, integer }) => (
                <NumberField
                  key={field}
                  label={labelFor(`number_health.${field}`)}
                  unit={unit}
                  path={`number_health.${field}`}
                  value={s.number_health[field]}
                  min={numberHealthLimits[field].min}
                  max={numberHealthLimits[field].max}
                  integer={integer}
                  invalid={invalid}
                  onChange={(v) => health({ [field]: v })}
                />
              ))}
            </div>
            <label className="check spaced">
              <input
                type="checkbox"
                checked={s.number_health.daily_message_cap === null}
                onChange={(e) => health({ daily_message_cap: e.target.checked ? null : (preset?.number_health.daily_message_cap ?? 1000) })}
              />
              Sem limite diário de mensagens
            </label>
            <p className="muted small hint">
              Durante o aquecimento o limite do dia começa no valor do 1º dia e cresce 50% a cada dia, sem passar do limite diário. O intervalo entre envios
              vale para o número em todas as campanhas somadas.
            </p>
          </section>

          <section className="card" aria-labelledby="prefs-title">
            <h2 id="prefs-title">Preferências</h2>
            <div className="form-grid">
              <Field label="Prévia de links" hint="Título e imagem do primeiro link da mensagem.">
                {(c) => (
                  <select
                    {...c}
                    value={s.preferences.link_preview_mode}
                    aria-invalid={invalid("preferences.link_preview_mode") || undefined}
                    onChange={(e) => prefs({ link_preview_mode: e.target.value as Section<"preferences">["link_preview_mode"] })}
                  >
                    <option value="ask_always">Escolher em cada campanha</option>
                    <option value="always">Sempre mostrar</option>
                    <option value="never">Nunca mostrar</option>
                  </select>
                )}
              </Field>
              <Field label="Tamanho da prévia" hint="Automático deixa o aplicativo escolher.">
                {(c) => (
                  <select
                    {...c}
                    value={s.preferences.link_preview_type}
                    disabled={s.preferences.link_preview_mode === "never"}
                    aria-invalid={invalid("preferences.link_preview_type") || undefined}
                    onChange={(e) => prefs({ link_preview_type: e.target.value as Section<"preferences">["link_preview_type"] })}
                  >
                    <option value="auto">Automático</option>
                    <option value="large">Grande</option>
                    <option value="small">Pequena</option>
                  </select>
                )}
              </Field>
            </div>
            <label className="check spaced">
              <input type="checkbox" checked={s.preferences.forward_message_enabled} onChange={(e) => prefs({ forward_message_enabled: e.target.checked })} />
              Encaminhar mensagens
            </label>
            <p className="muted small hint">Envia uma vez e encaminha a mesma mensagem aos outros grupos, quando o canal permite.</p>
          </section>

          <section className="card" id="test-groups" aria-labelledby="test-groups-title">
            <h2 id="test-groups-title">Grupos de teste</h2>
            <p className="muted section-help">Onde "Enviar teste", na criação de campanha, envia a mensagem antes de ela ir para os grupos do segmento.</p>
            <TestGroupsEditor
              value={s.test_groups}
              invalid={invalid("test_groups")}
              onChange={(test_groups) => {
                setSaved(null);
                setDraft({ ...s, test_groups });
              }}
            />
          </section>

          <section className="card" aria-labelledby="queue-title">
            <fieldset>
              <legend>
                <h2 id="queue-title">Fila</h2>
              </legend>
              <p className="muted section-help">O que acontece quando mais de uma campanha quer enviar ao mesmo tempo.</p>
              <ChoiceList
                name="concurrent_mode"
                options={queueModes}
                value={s.queue.concurrent_mode}
                onChange={(concurrent_mode) => set("queue", { concurrent_mode })}
              />
            </fieldset>
          </section>

          <section className="card" aria-labelledby="schedule-title">
            <div className="row space-between">
              <h2 id="schedule-title">Horário de envio</h2>
              <span className="badge badge-tz">Horário de Brasília</span>
            </div>
            <label className="check">
              <input type="checkbox" checked={sch.enabled} onChange={(e) => schedule({ enabled: e.target.checked })} />
              Enviar só dentro do horário abaixo
            </label>
            <p className="muted small hint">Desligado, as campanhas enviam a qualquer hora, todos os dias.</p>

            <div className={sch.enabled ? "schedule-rules" : "schedule-rules dimmed"}>
              <div className="form-grid">
                <div className="stack tight">
                  <label className="check">
                    <input type="checkbox" checked={sch.finish_queued_on_end} onChange={(e) => schedule({ finish_queued_on_end: e.target.checked })} />
                    Terminar campanhas em andamento quando o horário acaba
                  </label>
                  <p className="muted small hint">Desmarcado, a campanha pausa e continua na próxima janela.</p>
                  <Field label="Até quando terminar">
                    {(c) => (
                      <select
                        {...c}
                        value={sch.finish_queued_mode}
                        disabled={!sch.finish_queued_on_end}
                        onChange={(e) => schedule({ finish_queued_mode: e.target.value as Section<"sending_schedule">["finish_queued_mode"] })}
                      >
                        <option value="same_day">Só até a meia-noite</option>
                        <option value="between_days">Mesmo depois da meia-noite</option>
                      </select>
                    )}
                  </Field>
                </div>
                <div className="stack tight">
                  <label className="check">
                    <input type="checkbox" checked={sch.cancel_outside_hours} onChange={(e) => schedule({ cancel_outside_hours: e.target.checked })} />
                    Cancelar campanhas que começariam fora do horário
                  </label>
                  <p className="muted small hint">Desmarcado, elas esperam a próxima janela.</p>
                  <Field label="Quando cancelar">
                    {(c) => (
                      <select
                        {...c}
                        value={sch.cancel_mode}
                        disabled={!sch.cancel_outside_hours}
                        onChange={(e) => schedule({ cancel_mode: e.target.value as Section<"sending_schedule">["cancel_mode"] })}
                      >
                        <option value="between_days">Só se a próxima janela for em outro dia</option>
                        <option value="always">Sempre</option>
                      </select>
                    )}
                  </Field>
                </div>
              </div>
              <h3>Semana</h3>
              <p className="muted small">Um dia pode ter mais de uma janela (ex.: 08:00–12:00 e 14:00–18:00). Todos os horários são de Brasília.</p>
              <ScheduleEditor days={sch.days} invalid={invalid} onChange={(days) => schedule({ days })} />
            </div>
          </section>
        </fieldset>
        {canEdit && (
          <section className="save-bar" aria-label="Salvar configurações">
            <div className="grow" aria-live="polite">
              {edit.error ? (
                errors.length ? (
                  <div className="alert alert-error" role="alert">
                    Não foi possível salvar:
                    <ul className="error-list">
                      {errors.map((e) => (
                        <li key={e.path + e.message}>
                          <strong>{labelFor(e.path)}</strong> <code>{e.path}</code>: {e.message}
                        </li>
                      ))}
                    </ul>
                  </div>
                ) : (
                  <ErrorAlert error={edit.error} />
                )
              ) : saved ? (
                <p className="alert alert-success" role="status">
                  <strong>Salvo.</strong>{" "}
                  {saved.length === 0 ? (
                    "Nada mudou."
                  ) : (
                    <>
                      Alterado:{" "}
                      {saved.map((path, i) => (
                        <span key={path} title={path}>
                          {i > 0 && ", "}
                          {labelFor(path)}
                        </span>
                      ))}
                    </>
                  )}
                </p>
              ) : dirty ? (
                <p className="muted">Há alterações não salvas.</p>
              ) : (
                <p className="muted">Nenhuma alteração.</p>
              )}
            </div>
            <button type="button" className="btn btn-ghost" onClick={discard} disabled={!dirty || edit.isPending}>
              Descartar
            </button>
            <button type="submit" className="btn btn-primary" disabled={!dirty || edit.isPending}>
              {edit.isPending ? "Salvando…" : "Salvar alterações"}
            </button>
          </section>
        )}
      </form>
    </>
  );
}

function NumberField({
  label,
  unit,
  path,
  value,
  min = 0,
  max,
  integer,
  invalid,
  onChange,
}: {
  label: string;
  unit: string;
  path: string;
  value: number;
  min?: number;
  max: number;
  integer?: boolean;
  invalid: (path: string) => boolean;
  onChange: (value: number) => void;
}): ReactNode {
  return (
    <Field label={label} hint={`de ${min} a ${max} ${unit}`}>
      {(c) => (
        <span className="input-unit">
          <input
            {...c}
            type="number"
            inputMode={integer ? "numeric" : "decimal"}
            min={min}
            max={max}
            step={integer ? 1 : "any"}
            required
            value={Number.isNaN(value) ? "" : value}
            aria-invalid={invalid(path) || undefined}
            onChange={(e) => onChange(e.target.value === "" ? Number.NaN : Number(e.target.value))}
          />
          <span className="muted" aria-hidden="true">
            {unit}
          </span>
        </span>
      )}
    </Field>
  );
}
