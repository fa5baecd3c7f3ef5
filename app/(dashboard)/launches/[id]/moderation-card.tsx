"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { ChoiceList, ErrorAlert, Field } from "../../../_components/ui";
import { type RouterOutputs, useTRPC } from "../../../_lib/trpc";
import { useCan } from "../../role-context";
import { ModerationEvents } from "./moderation-events";

type Moderation = RouterOutputs["launches"]["info"]["moderation"];
type Mode = Moderation["mode"];

const modes: { value: Mode; label: string; help: string; badge: string }[] = [
  { value: "off", label: "Desligada", help: "Nada é avaliado.", badge: "badge-canceled" },
  { value: "shadow", label: "Testar", help: "Cada decisão é registrada abaixo (apagaria, removeria) e nada é feito nos grupos.", badge: "badge-info" },
  {
    value: "enforce",
    label: "Aplicar",
    help: "Apaga a mensagem para todos, dá um aviso a quem a enviou e remove ao chegar no limite.",
    badge: "badge-connected",
  },
];

/** The form's text, as typed: lists one a line (or separated by commas). */
interface Draft {
  mode: Mode;
  block_links: boolean;
  allowed_domains: string;
  banned_words: string;
  max_messages_per_minute: string;
  strikes_to_remove: string;
  country_codes: string;
}

const toDraft = (m: Moderation): Draft => ({
  mode: m.mode,
  block_links: m.block_links,
  allowed_domains: m.allowed_domains.join("\n"),
  banned_words: m.banned_words.join("\n"),
  max_messages_per_minute: m.max_messages_per_minute === null ? "" : String(m.max_messages_per_minute),
  strikes_to_remove: String(m.strikes_to_remove),
  country_codes: (m.country_codes ?? []).join(", "),
});

const list = (text: string, separators: RegExp) =>
  text
    .split(separators)
    .map((s) => s.trim())
    .filter(Boolean);

/** What edit-launch takes: a domain typed as a URL keeps its hostname; "+55" is 55; empty country codes: any. */
function toSettings(d: Draft) {
  const codes = list(d.country_codes, /[\s,;]+/).map((c) => c.replace(/^\+/, ""));
  return {
    mode: d.mode,
    block_links: d.block_links,
    allowed_domains: list(d.allowed_domains, /[\s,;]+/).map((h) =>
      h
        .toLowerCase()
        .replace(/^[a-z]+:\/\//, "")
        .replace(/[/?#:].*$/, ""),
    ),
    banned_words: list(d.banned_words, /[\n,;]+/),
    max_messages_per_minute: d.max_messages_per_minute.trim() === "" ? null : Number(d.max_messages_per_minute),
    strikes_to_remove: Number(d.strikes_to_remove),
    country_codes: codes.length ? codes : null,
  };
}

const same = (a: Draft, b: Draft) => JSON.stringify(a) === JSON.stringify(b);

/**
 * "Moderação" (docs/moderation.md#dashboard): the launch's mode and rules, saved through edit-launch, and the decisions
 * made in its groups. Viewers see the rules without a way to change them (the server refuses anyway).
 */
export function ModerationCard({ id, moderation, groups }: { id: string; moderation: Moderation; groups: { id_group: string; name: string }[] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const canEdit = useCan("editor");
  const saved = toDraft(moderation);
  // The page polls info-launch: what is typed stays until it is saved (or thrown away).
  const [draft, setDraft] = useState<Draft>(saved);
  const [done, setDone] = useState(false);
  const edit = useMutation(
    trpc.launches.edit.mutationOptions({
      onSuccess: async (launch) => {
        // The rules as the server stored them (a URL typed as a domain keeps its hostname).
        setDraft(toDraft(launch.moderation));
        setDone(true);
        await queryClient.invalidateQueries(trpc.launches.info.queryFilter());
      },
    }),
  );
  const set = (change: Partial<Draft>) => {
    setDone(false);
    setDraft({ ...draft, ...change });
  };
  const dirty = !same(draft, saved);
  const current = modes.find((m) => m.value === moderation.mode);

  function onSave(e: FormEvent) {
    e.preventDefault();
    edit.mutate({ id_launch: id, moderation: toSettings(draft) });
  }

  return (
    <section className="card" aria-labelledby="moderation-title" data-testid="moderation-card">
      <div className="row space-between wrap">
        <h2 id="moderation-title">Moderação</h2>
        <span className={`badge ${current?.badge}`} data-testid="moderation-mode">
          {current?.label}
        </span>
      </div>
      <p className="muted small">
        Mensagens com links, palavras proibidas ou em excesso, e entradas de números bloqueados ou de fora dos países escolhidos. Os administradores, a equipe e
        os seus números nunca são avaliados.
      </p>
      <form className="stack" aria-label="Regras de moderação" onSubmit={onSave}>
        <fieldset disabled={!canEdit || edit.isPending} className="stack">
          <ChoiceList name="moderation-mode" label="Modo da moderação" options={modes} value={draft.mode} onChange={(mode) => set({ mode })} />
          <label className="check">
            <input type="checkbox" checked={draft.block_links} onChange={(e) => set({ block_links: e.target.checked })} />
            <span>Bloquear links (convites de outros grupos também)</span>
          </label>
          <div className="form-grid">
            <Field label="Domínios permitidos" hint="Um por linha, ex.: seusite.com.br (vale para os subdomínios).">
              {(c) => (
                <textarea
                  {...c}
                  rows={3}
                  value={draft.allowed_domains}
                  disabled={!draft.block_links}
                  onChange={(e) => set({ allowed_domains: e.target.value })}
                />
              )}
            </Field>
            <Field label="Palavras proibidas" hint="Uma por linha; palavra inteira, sem diferenciar maiúsculas nem acentos.">
              {(c) => <textarea {...c} rows={3} value={draft.banned_words} onChange={(e) => set({ banned_words: e.target.value })} />}
            </Field>
            <Field label="Máximo de mensagens por minuto" hint="Por pessoa; vazio: sem limite.">
              {(c) => (
                <input
                  {...c}
                  type="number"
                  min={1}
                  max={60}
                  value={draft.max_messages_per_minute}
                  onChange={(e) => set({ max_messages_per_minute: e.target.value })}
                />
              )}
            </Field>
            <Field label="Avisos até remover" hint="Cada regra quebrada é um aviso; neste número a pessoa sai do grupo.">
              {(c) => (
                <input
                  {...c}
                  type="number"
                  min={1}
                  max={10}
                  required
                  value={draft.strikes_to_remove}
                  onChange={(e) => set({ strikes_to_remove: e.target.value })}
                />
              )}
            </Field>
            <Field label="Códigos de país permitidos" hint="Ex.: 55. Quem entra com outro código é removido; vazio: qualquer país.">
              {(c) => <input {...c} value={draft.country_codes} placeholder="55" onChange={(e) => set({ country_codes: e.target.value })} />}
            </Field>
          </div>
        </fieldset>
        {canEdit && (
          <div className="row wrap">
            <button type="submit" className="btn btn-primary" disabled={edit.isPending || !dirty}>
              Salvar moderação
            </button>
            {dirty && (
              <button type="button" className="btn btn-ghost" onClick={() => set(saved)}>
                Descartar
              </button>
            )}
            {done && !dirty && (
              <span className="muted small" role="status">
                Moderação salva.
              </span>
            )}
          </div>
        )}
        <ErrorAlert error={edit.error} />
      </form>
      <ModerationEvents id={id} groups={groups} />
    </section>
  );
}
