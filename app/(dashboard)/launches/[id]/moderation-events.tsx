"use client";

import { useInfiniteQuery, useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { CopyButton, ErrorAlert, QueryTable } from "../../../_components/ui";
import { formatDateTime } from "../../../_lib/format";
import { type RouterOutputs, useTRPC } from "../../../_lib/trpc";
import { useCan } from "../../role-context";

type ModerationEvent = RouterOutputs["moderation"]["events"]["events"][number];

const ruleLabel: Record<ModerationEvent["rule"], string> = {
  link: "Link",
  banned_word: "Palavra proibida",
  flood: "Mensagens demais",
  country_code: "País fora da lista",
  blocklist: "Número bloqueado",
};

const actionLabel: Record<ModerationEvent["action"], string> = {
  deleted: "Mensagem apagada",
  removed: "Removido do grupo",
  would_delete: "Apagaria (teste)",
  would_remove: "Removeria (teste)",
};

/** Rows shown at first, and how many more each "Ver mais antigas" shows (the server answers 100 a page). */
const step = 10;

/**
 * The launch's moderation decisions, newest first (list-moderation-events), followed live. "Desfazer" on a removal made
 * by mistake (moderation.undo) clears the person's strikes and blocklist entry and shows the group's invite link to send
 * them: no one is re-added by force.
 */
export function ModerationEvents({ id, groups }: { id: string; groups: { id_group: string; name: string }[] }) {
  const trpc = useTRPC();
  const canUndo = useCan("editor");
  const [shown, setShown] = useState(step);
  const undo = useMutation(trpc.moderation.undo.mutationOptions());
  const events = useInfiniteQuery(
    trpc.moderation.events.infiniteQueryOptions(
      { id_launch: id },
      { getNextPageParam: (page) => page.next_cursor ?? undefined, initialCursor: undefined, refetchInterval: 5000 },
    ),
  );
  const all = events.data?.pages.flatMap((p) => p.events);
  const groupName = new Map(groups.map((g) => [g.id_group, g.name]));
  const more = (all?.length ?? 0) > shown || events.hasNextPage;

  function showMore() {
    const next = shown + step;
    setShown(next);
    if ((all?.length ?? 0) < next && events.hasNextPage) void events.fetchNextPage();
  }

  const undone = undo.data && undo.variables;
  return (
    <>
      <h3>Últimas decisões</h3>
      {undone && (
        <div className="alert alert-success" role="status" data-testid="moderation-undone">
          <p>
            Remoção desfeita: os avisos de <span className="mono">{undone.participant}</span> foram zerados e o número saiu da lista de bloqueio. Ninguém é
            readicionado à força: envie o convite do grupo {groupName.get(undone.id_group) ?? undone.id_group} para a pessoa voltar.
          </p>
          {undo.data.invite_link ? (
            <div className="row wrap">
              <input className="mono grow" readOnly aria-label="Convite do grupo" value={undo.data.invite_link} onFocus={(e) => e.currentTarget.select()} />
              <CopyButton text={undo.data.invite_link} label="Copiar convite" />
            </div>
          ) : (
            <p className="muted">Este grupo ainda não tem convite conhecido: gere um no WhatsApp.</p>
          )}
        </div>
      )}
      <ErrorAlert error={undo.error} />
      <div className="table-scroll">
        <QueryTable
          query={{ isPending: events.isPending, error: events.error, data: all?.slice(0, shown) }}
          empty="Nenhuma decisão ainda: com a moderação em Testar ou Aplicar, cada mensagem ou entrada que quebra uma regra aparece aqui."
          columns={canUndo ? ["Quando", "Quem", "Grupo", "Regra", "Ação", "Trecho", null] : ["Quando", "Quem", "Grupo", "Regra", "Ação", "Trecho"]}
          label="Decisões da moderação"
        >
          {(rows) =>
            rows.map((e, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: decisions have no id in the API; the order is fixed (newest first).
              <tr key={i} data-testid="moderation-event">
                <td className="nowrap">{formatDateTime(e.at)}</td>
                <td className="mono">{e.participant}</td>
                <td>{groupName.get(e.id_group) ?? e.id_group}</td>
                <td data-testid="moderation-event-rule">{ruleLabel[e.rule]}</td>
                <td data-testid="moderation-event-action">
                  <span className={e.action.startsWith("would_") ? "badge badge-info" : "badge badge-failed"}>{actionLabel[e.action]}</span>
                </td>
                <td>{e.excerpt || <span className="muted">entrada no grupo</span>}</td>
                {canUndo && (
                  <td>
                    {e.action === "removed" && (
                      <button
                        type="button"
                        className="btn btn-ghost"
                        disabled={undo.isPending}
                        onClick={() => undo.mutate({ id_launch: id, id_group: e.id_group, participant: e.participant })}
                      >
                        Desfazer
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))
          }
        </QueryTable>
      </div>
      {more && (
        <button type="button" className="btn btn-ghost" disabled={events.isFetchingNextPage} onClick={showMore}>
          Ver mais antigas
        </button>
      )}
      <ErrorAlert error={all ? events.error : null} />
    </>
  );
}
