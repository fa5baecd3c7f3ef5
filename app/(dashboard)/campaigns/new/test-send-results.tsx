"use client";

import Link from "next/link";
import { ErrorAlert } from "../../../_components/ui";
import type { RouterOutputs } from "../../../_lib/trpc";

type Results = RouterOutputs["campaigns"]["sendTest"]["results"];

const statusLabel: Record<Results[number]["status"], string> = { sent: "enviado", failed: "falhou", unknown: "sem resposta do provedor" };

/** What "Enviar teste" answered: per test group, sent or why not, and the text it got (docs/decisions.md#test-send). */
export function TestSendResults({ mutation }: { mutation: { data?: { results: Results }; error: unknown } }) {
  if (mutation.error) {
    const noGroups = /no_test_groups|no test groups/.test(String((mutation.error as Error).message));
    return (
      <div>
        <ErrorAlert error={mutation.error} />
        {noGroups && (
          <p className="small">
            Escolha até 5 grupos de teste em <Link href="/settings#test-groups">Configurações</Link>.
          </p>
        )}
      </div>
    );
  }
  if (!mutation.data) return null;
  const results = mutation.data.results;
  const sent = results.filter((r) => r.status === "sent").length;
  return (
    <div className={`alert ${sent === results.length ? "alert-success" : "alert-warning"}`} role="status" data-testid="test-send-results">
      Teste enviado a {sent} de {results.length} {results.length === 1 ? "grupo" : "grupos"} de teste.
      <ul className="test-send-results">
        {results.map((r) => (
          <li key={`${r.id_channel}:${r.id_group}`} className="small">
            <strong>{statusLabel[r.status]}</strong> — {r.id_group}
            {r.error ? `: ${r.error}` : ""}
            <div className="variation muted">{r.text}</div>
          </li>
        ))}
      </ul>
    </div>
  );
}
