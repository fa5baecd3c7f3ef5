"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ErrorAlert } from "../../../_components/ui";
import { useTRPC } from "../../../_lib/trpc";

const removalLabel: Record<string, string> = { pending: "Remoção em andamento", failed: "Remoção falhou" };

/**
 * "Compradores ainda nos grupos" (docs/launches.md#buyers-leave-the-groups): the launch's buyers who are still members
 * of its groups, the buyer-removal switches, and "Remover agora": group actions of type remove for them (the same
 * engine: admin numbers, pacing, read-back).
 */
export function BuyersInGroupsCard({ id, buyers, removed }: { id: string; buyers: { remove_from_groups: boolean; dry_run: boolean }; removed: number }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.launchBuyers.list.queryOptions({ id_launch: id }, { refetchInterval: 5000 }));
  const refresh = () =>
    Promise.all([queryClient.invalidateQueries(trpc.launchBuyers.list.queryFilter()), queryClient.invalidateQueries(trpc.launches.info.queryFilter())]);
  const removeNow = useMutation(trpc.launchBuyers.removeNow.mutationOptions({ onSuccess: refresh }));
  const edit = useMutation(trpc.launches.edit.mutationOptions({ onSuccess: refresh }));
  const rows = list.data?.buyers ?? [];
  const people = new Set(rows.map((r) => r.participant)).size;

  return (
    <section className="card" aria-labelledby="buyers-in-groups-title" data-testid="buyers-in-groups">
      <h2 id="buyers-in-groups-title">Compradores ainda nos grupos</h2>
      <div className="row wrap">
        <label className="row">
          <input
            type="checkbox"
            checked={buyers.remove_from_groups}
            disabled={edit.isPending}
            onChange={(e) => edit.mutate({ id_launch: id, buyers: { remove_from_groups: e.target.checked } })}
          />
          <span>Remover quem compra dos grupos</span>
        </label>
        <label className="row">
          <input
            type="checkbox"
            checked={buyers.dry_run}
            disabled={edit.isPending}
            onChange={(e) => edit.mutate({ id_launch: id, buyers: { dry_run: e.target.checked } })}
          />
          <span>Só simular (ninguém é removido)</span>
        </label>
      </div>
      <p className="muted small">
        Compras aprovadas pelas plataformas (Hotmart, Kiwify) de quem está em um grupo do lançamento, pelo telefone com ou sem o nono dígito. A equipe, os
        administradores e os seus números nunca são removidos. Removidos até agora: <strong data-testid="buyers-removed">{removed}</strong>.
      </p>
      {list.isPending ? null : rows.length === 0 ? (
        <p className="muted">Nenhum comprador nos grupos.</p>
      ) : (
        <>
          <table className="table" aria-label="Compradores ainda nos grupos">
            <thead>
              <tr>
                <th>Participante</th>
                <th>Grupo</th>
                <th>Compra</th>
                <th>Remoção</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={`${r.id_group} ${r.participant}`} data-testid="buyer-in-group">
                  <td>{r.participant}</td>
                  <td>{r.group_name}</td>
                  <td>
                    {r.platform} {r.transaction}
                  </td>
                  <td>{r.removal ? removalLabel[r.removal] : "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <div className="row wrap">
            <button type="button" className="btn btn-danger" disabled={removeNow.isPending} onClick={() => removeNow.mutate({ id_launch: id })}>
              Remover agora
            </button>
            <span className="muted small">
              {people} {people === 1 ? "pessoa" : "pessoas"} em {rows.length} {rows.length === 1 ? "participação" : "participações"}
              {removeNow.data ? ` · ${removeNow.data.removals} remoções enviadas` : ""}
            </span>
          </div>
        </>
      )}
      <ErrorAlert error={list.error ?? removeNow.error ?? edit.error} />
    </section>
  );
}
