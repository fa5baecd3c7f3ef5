"use client";

import { useState } from "react";
import { ErrorAlert } from "../../../_components/ui";
import { useTRPCClient } from "../../../_lib/trpc";
import { downloadFile } from "./download-file";

/**
 * The launch's leads (docs/launches.md#leads): how many were sent to launch-leads, how many of them joined,
 * and the CSV of those who never joined, to send them the link again.
 */
export function LeadsPanel({ id, slug, leads, joined }: { id: string; slug: string; leads: number; joined: number }) {
  const client = useTRPCClient();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const missing = leads - joined;

  async function download(delimiter: "comma" | "semicolon") {
    setBusy(true);
    setError(undefined);
    try {
      const answer = await client.launchLeads.list.query({ id_launch: id, status: "not_joined", format: "csv", delimiter });
      if (!("file" in answer)) throw new Error("O servidor não devolveu o arquivo CSV.");
      downloadFile(answer.file, `${slug}-leads-nao-entraram.csv`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card" aria-labelledby="leads-title">
      <h2 id="leads-title">Leads</h2>
      <dl className="stats" aria-label="Leads do lançamento">
        <div className="stat">
          <dt>Leads</dt>
          <dd data-testid="total-leads">{leads}</dd>
        </div>
        <div className="stat stat-sent">
          <dt>Entraram</dt>
          <dd data-testid="total-leads-joined">{joined}</dd>
        </div>
        <div className="stat">
          <dt>Não entraram</dt>
          <dd data-testid="total-leads-not-joined">{missing}</dd>
        </div>
      </dl>
      <p className="muted small">
        Leads enviados pela API (launch-leads), contados uma vez por telefone. Entraram: estão ou estiveram em um grupo do lançamento (pelo telefone ou pelo LID
        que um número do lançamento associou a ele).
      </p>
      {leads > 0 ? (
        <div className="stack tight">
          <div className="row wrap">
            <button type="button" className="btn" disabled={busy || missing === 0} onClick={() => download("comma")}>
              Baixar CSV de quem não entrou
            </button>
            <button type="button" className="btn btn-ghost" disabled={busy || missing === 0} onClick={() => download("semicolon")}>
              CSV com ponto e vírgula (Excel em português)
            </button>
          </div>
          <ErrorAlert error={error} />
        </div>
      ) : null}
    </section>
  );
}
