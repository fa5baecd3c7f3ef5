"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { CampaignStatusBadge, ErrorAlert, Loading } from "../../_components/ui";
import { formatDateTime, isActiveCampaign } from "../../_lib/format";
import { useTRPC } from "../../_lib/trpc";
import { type ActionTarget, GroupActionForm } from "./group-action-form";
import { actionStatusLabel, badgeClass, describeAction, isActiveAction } from "./labels";

/** While something runs (or is due within a minute) the timeline follows it closely; scheduled for later, now and then. */
const pollRunning = 2000;
const pollScheduled = 30_000;

interface Entry {
  key: string;
  kind: "action" | "campaign";
  href: string;
  title: string;
  what: string;
  at: string;
  status: string;
  pauseReason?: string | null;
  groups: { total: number; done: number; failed: number };
  cancelable: boolean;
}

/**
 * The Cronograma (CONTRACT §8): the target's group actions and the campaigns to its segment on one timeline, oldest
 * first (what, when in Brasília time, status, groups done/failed/total), with a cancel button for an action not
 * finished and the form that adds one. A launch's page and a segment's page both show it.
 */
export function Cronograma({ target, segmentId }: { target: ActionTarget; segmentId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const soon = (at: string | null) => at !== null && Date.parse(at) < Date.now() + 60_000;
  const actions = useQuery(
    trpc.groupActions.list.queryOptions(target, {
      refetchInterval: (q) => {
        const list = q.state.data?.actions ?? [];
        if (list.some((a) => a.status === "running" || (a.status === "scheduled" && soon(a.scheduled_at)))) return pollRunning;
        return list.some((a) => a.status === "scheduled") ? pollScheduled : false;
      },
    }),
  );
  const campaigns = useQuery(
    trpc.campaigns.list.queryOptions(
      { id_segment: segmentId },
      { refetchInterval: (q) => ((q.state.data ?? []).some((c) => isActiveCampaign(c.status)) ? pollScheduled : false) },
    ),
  );
  const cancel = useMutation(
    trpc.groupActions.cancel.mutationOptions({ onSettled: () => queryClient.invalidateQueries(trpc.groupActions.list.queryFilter()) }),
  );

  const entries: Entry[] = [
    ...(actions.data?.actions ?? []).map((a) => ({
      key: a.id_action,
      kind: "action" as const,
      href: `/acoes/${encodeURIComponent(a.id_action)}`,
      title: a.name ?? describeAction(a.action),
      what: a.name ? describeAction(a.action) : "Ação nos grupos",
      at: a.status === "scheduled" ? a.scheduled_at : (a.started_at ?? a.scheduled_at),
      status: a.status,
      groups: a.groups,
      cancelable: isActiveAction(a.status),
    })),
    ...(campaigns.data ?? []).map((c) => ({
      key: c.id_campaign,
      kind: "campaign" as const,
      href: `/campaigns/${encodeURIComponent(c.id_campaign)}`,
      title: c.name,
      what: "Campanha",
      at: c.scheduled_at ?? c.created_at,
      status: c.status,
      pauseReason: c.pause_reason,
      groups: { total: c.groups.total, done: c.groups.sent, failed: c.groups.failed },
      cancelable: false,
    })),
  ].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));

  return (
    <section className="card" aria-labelledby="cronograma-title">
      <h2 id="cronograma-title">Cronograma</h2>
      <p className="muted">
        Ações em todos os grupos (fechar, abrir, renomear, foto…) e campanhas, na ordem do horário de Brasília. Cada grupo muda uma só vez, pelos números que
        são admins nele.
      </p>
      {actions.isPending || campaigns.isPending ? (
        <Loading />
      ) : entries.length === 0 ? (
        <p className="muted">Nada no cronograma ainda: adicione uma ação abaixo ou envie uma campanha.</p>
      ) : (
        <ol className="timeline" aria-label="Cronograma">
          {entries.map((e) => (
            <li key={e.key} className="timeline-item" data-testid={`cronograma-${e.key}`}>
              <time dateTime={e.at} className="timeline-when">
                {formatDateTime(e.at)}
              </time>
              <div className="timeline-body">
                <Link href={e.href} className="timeline-title">
                  {e.title}
                </Link>
                <span className="muted small">{e.what}</span>
                <span className="row wrap timeline-status">
                  {e.kind === "action" ? (
                    <span className={`badge ${badgeClass[e.status] ?? ""}`} data-testid="action-status">
                      {actionStatusLabel[e.status as keyof typeof actionStatusLabel] ?? e.status}
                    </span>
                  ) : (
                    <CampaignStatusBadge status={e.status} pauseReason={e.pauseReason} />
                  )}
                  <span className="small" data-testid="action-groups">
                    {e.groups.done} {e.kind === "action" ? "feitos" : "enviados"} · {e.groups.failed} com falha · {e.groups.total} grupos
                  </span>
                </span>
              </div>
              {e.cancelable && (
                <button
                  type="button"
                  className="btn btn-danger"
                  disabled={cancel.isPending}
                  onClick={() => cancel.mutate({ id_action: e.key })}
                  aria-label={`Cancelar ${e.title}`}
                >
                  Cancelar
                </button>
              )}
            </li>
          ))}
        </ol>
      )}
      <ErrorAlert error={actions.error ?? campaigns.error ?? cancel.error} />
      <details className="add-action">
        <summary>Adicionar ação nos grupos</summary>
        <GroupActionForm target={target} />
      </details>
    </section>
  );
}
