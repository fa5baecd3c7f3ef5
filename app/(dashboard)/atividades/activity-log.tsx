"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { ErrorAlert, PageHeader, QueryTable } from "../../_components/ui";
import { formatDateTime } from "../../_lib/format";
import { type RouterOutputs, useTRPC } from "../../_lib/trpc";

type Entry = RouterOutputs["audit"]["list"]["entries"][number];
type ActorType = Entry["actor"]["type"];
const actorLabels: Record<ActorType, string> = {
  member: "Membro",
  api_key: "Chave de API",
  partner_app: "App parceiro",
  cli: "Operador (CLI)",
  system: "Serviço",
};

/** Quotes a CSV field when it needs it (RFC 4180); a leading =, +, - or @ is prefixed so spreadsheets don't run it. */
const csvField = (v: string | null) => {
  const s = v ?? "";
  const safe = /^[=+\-@]/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};

function downloadCsv(entries: Entry[]) {
  const header = ["at", "actor_type", "actor_id", "actor_label", "action", "target", "ip", "outcome"];
  const lines = entries.map((e) => [e.at, e.actor.type, e.actor.id, e.actor.label, e.action, e.target, e.ip, e.outcome].map(csvField).join(","));
  const blob = new Blob([`\uFEFF${[header.join(","), ...lines].join("\r\n")}\r\n`], { type: "text/csv;charset=utf-8" });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = "registro-de-atividades.csv";
  a.click();
  URL.revokeObjectURL(url);
}

/** The Registro de atividades (owner/admin; docs/team.md#audit-log): filters, 100 a page, CSV of what is loaded. */
export function ActivityLog() {
  const trpc = useTRPC();
  const [filter, setFilter] = useState<{ actor_type?: ActorType; action?: string; since?: string; until?: string }>({});
  const log = useInfiniteQuery(
    trpc.audit.list.infiniteQueryOptions(filter, { getNextPageParam: (page) => page.next_cursor ?? undefined, initialCursor: undefined }),
  );
  const entries = log.data?.pages.flatMap((p) => p.entries);

  function onFilter(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const day = (name: string) => {
      const v = String(form.get(name) ?? "");
      return v ? new Date(`${v}T00:00:00-03:00`).toISOString() : undefined;
    };
    setFilter({
      actor_type: (String(form.get("actor_type") ?? "") || undefined) as ActorType | undefined,
      action: String(form.get("action") ?? "").trim() || undefined,
      since: day("since"),
      until: day("until"),
    });
  }

  return (
    <>
      <PageHeader title="Registro de atividades" description="Cada mudança feita nesta conta: quem, o quê, quando e de onde. Mantido por 365 dias." />
      <section className="card">
        <form className="row" onSubmit={onFilter} aria-label="Filtros">
          <label className="field">
            <span>Quem</span>
            <select name="actor_type" defaultValue="">
              <option value="">Todos</option>
              {(Object.keys(actorLabels) as ActorType[]).map((t) => (
                <option key={t} value={t}>
                  {actorLabels[t]}
                </option>
              ))}
            </select>
          </label>
          <label className="field">
            <span>Ação</span>
            <input name="action" placeholder="campaign.create ou campaign." maxLength={100} />
          </label>
          <label className="field">
            <span>De</span>
            <input name="since" type="date" />
          </label>
          <label className="field">
            <span>Até (exclusive)</span>
            <input name="until" type="date" />
          </label>
          <button type="submit" className="btn btn-primary">
            Filtrar
          </button>
          <button type="button" className="btn btn-ghost" disabled={!entries?.length} onClick={() => entries && downloadCsv(entries)}>
            Baixar CSV
          </button>
        </form>
      </section>
      <section className="card">
        <QueryTable
          query={{ isPending: log.isPending, error: log.error, data: entries }}
          empty="Nenhuma atividade."
          columns={["Quando", "Quem", "Ação", "Alvo", "Endereço", "Resultado"]}
        >
          {(rows) =>
            rows.map((e, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: entries have no id in the API; the order is fixed.
              <tr key={i} className={e.outcome === "denied" ? "row-muted" : undefined}>
                <td>{formatDateTime(e.at)}</td>
                <td>
                  {actorLabels[e.actor.type]}
                  {e.actor.label ? ` · ${e.actor.label}` : ""}
                </td>
                <td>
                  <code>{e.action}</code>
                </td>
                <td className="mono">{e.target}</td>
                <td className="mono">{e.ip}</td>
                <td>{e.outcome === "ok" ? "ok" : "recusado"}</td>
              </tr>
            ))
          }
        </QueryTable>
        {log.hasNextPage && (
          <button type="button" className="btn btn-ghost" disabled={log.isFetchingNextPage} onClick={() => void log.fetchNextPage()}>
            Carregar mais
          </button>
        )}
        <ErrorAlert error={log.error} />
      </section>
    </>
  );
}
