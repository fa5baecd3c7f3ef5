import { launchCsvUrl } from "./launch-csv-url";

/**
 * The launch's leads (docs/launches.md#leads): how many were sent to launch-leads, how many of them joined,
 * and the CSV of those who never joined (a streamed download), to send them the link again.
 */
export function LeadsPanel({ id, leads, joined }: { id: string; leads: number; joined: number }) {
  const missing = leads - joined;
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
      {missing > 0 ? (
        <div className="row wrap">
          <a className="btn" href={launchCsvUrl(id, "leads", { status: "not_joined" })} download>
            Baixar CSV de quem não entrou
          </a>
          <a className="btn btn-ghost" href={launchCsvUrl(id, "leads", { status: "not_joined", delimiter: "semicolon" })} download>
            CSV com ponto e vírgula (Excel em português)
          </a>
        </div>
      ) : leads > 0 ? (
        <p className="muted small">Todos os leads entraram em um grupo.</p>
      ) : null}
    </section>
  );
}
