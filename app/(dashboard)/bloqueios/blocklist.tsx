"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { ErrorAlert, Field, PageHeader, QueryTable } from "../../_components/ui";
import { formatDateTime } from "../../_lib/format";
import { useTRPC } from "../../_lib/trpc";
import { useCan } from "../role-context";
import { blocklistMax, parsePastedNumbers } from "./parse-numbers";

/**
 * Números bloqueados (docs/moderation.md#dashboard): the account's blocklist. A listed number that joins a group of a
 * launch with moderation on is removed (Aplicar) or recorded (Testar). Editors add (pasted, one a line) and remove.
 */
export function Blocklist() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const canEdit = useCan("editor");
  const list = useQuery(trpc.moderation.blocklist.queryOptions({}));
  const [text, setText] = useState("");
  const [invalid, setInvalid] = useState<string[]>([]);
  const [tooMany, setTooMany] = useState(0);
  const [result, setResult] = useState<string>();
  const edit = useMutation(
    trpc.moderation.editBlocklist.mutationOptions({
      onSuccess: async (out, input) => {
        if (input.add?.length) {
          setText("");
          setResult(`${out.added} ${out.added === 1 ? "número adicionado" : "números adicionados"} (${input.add.length - out.added} já estavam na lista).`);
        } else setResult(`${out.removed} ${out.removed === 1 ? "número removido" : "números removidos"} da lista.`);
        await queryClient.invalidateQueries(trpc.moderation.blocklist.queryFilter());
      },
    }),
  );

  function onAdd(e: FormEvent) {
    e.preventDefault();
    setResult(undefined);
    const { numbers, invalid } = parsePastedNumbers(text);
    setInvalid(invalid);
    setTooMany(numbers.length > blocklistMax ? numbers.length : 0);
    if (invalid.length === 0 && numbers.length > 0 && numbers.length <= blocklistMax) edit.mutate({ add: numbers });
  }

  return (
    <>
      <PageHeader
        title="Números bloqueados"
        description="Quem está nesta lista é removido ao entrar em um grupo de lançamento com a moderação ligada (em Testar, só é registrado)."
      />
      {canEdit && (
        <section className="card" aria-labelledby="blocklist-add-title">
          <h2 id="blocklist-add-title">Adicionar números</h2>
          <form className="stack" onSubmit={onAdd}>
            <Field label="Números" hint="Cole um por linha (ou separados por vírgula), com o código do país: 5511987654321. Até 1.000 de uma vez.">
              {(c) => <textarea {...c} rows={4} value={text} onChange={(e) => setText(e.target.value)} placeholder={"5511987654321\n5531987654321"} />}
            </Field>
            <div className="row wrap">
              <button type="submit" className="btn btn-primary" disabled={edit.isPending || text.trim() === ""}>
                Bloquear
              </button>
              {result && (
                <span className="muted small" role="status">
                  {result}
                </span>
              )}
            </div>
          </form>
          {invalid.length > 0 && (
            <p className="alert alert-error" role="alert">
              {invalid.length === 1 ? "Número inválido" : "Números inválidos"}: {invalid.join(", ")}. Use só dígitos com o código do país (8 a 15 dígitos), ex.:
              5511987654321.
            </p>
          )}
          {tooMany > 0 && (
            <p className="alert alert-error" role="alert">
              {tooMany} números: no máximo {blocklistMax.toLocaleString("pt-BR")} de uma vez.
            </p>
          )}
          <ErrorAlert error={edit.error} />
        </section>
      )}
      <section className="card" aria-labelledby="blocklist-title">
        <h2 id="blocklist-title">Lista {list.data && <span className="muted small">({list.data.total})</span>}</h2>
        <QueryTable
          query={{ isPending: list.isPending, error: list.error, data: list.data?.numbers }}
          empty="Nenhum número bloqueado."
          columns={canEdit ? ["Número", "Bloqueado em", null] : ["Número", "Bloqueado em"]}
          label="Números bloqueados"
        >
          {(rows) =>
            rows.map((n) => (
              <tr key={n.phone} data-testid="blocked-number">
                <td className="mono">{n.phone}</td>
                <td>{formatDateTime(n.added_at)}</td>
                {canEdit && (
                  <td>
                    <button
                      type="button"
                      className="btn btn-ghost-danger"
                      aria-label={`Desbloquear ${n.phone}`}
                      disabled={edit.isPending}
                      onClick={() => {
                        setResult(undefined);
                        edit.mutate({ remove: [n.phone] });
                      }}
                    >
                      Desbloquear
                    </button>
                  </td>
                )}
              </tr>
            ))
          }
        </QueryTable>
      </section>
    </>
  );
}
