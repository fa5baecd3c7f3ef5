"use client";

import { skipToken, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ErrorAlert } from "../../../_components/ui";
import { useTRPC } from "../../../_lib/trpc";

/**
 * More groups for the launch: create N from the template now, or adopt groups the channel already
 * administers (appended after the last one, in the order picked).
 */
export function AddGroups({ id, channelIds, inLaunch }: { id: string; channelIds: string[]; inLaunch: string[] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const channels = useQuery(trpc.channels.list.queryOptions());
  const [channelId, setChannelId] = useState(channelIds[0] ?? "");
  const [picked, setPicked] = useState<string[]>([]);
  const [count, setCount] = useState("1");
  const [done, setDone] = useState<string>();
  const groups = useQuery(trpc.channels.groups.queryOptions(channelId ? { id_channel: channelId } : skipToken));
  const taken = new Set(inLaunch);
  const candidates = groups.data?.groups.filter((g) => !taken.has(g.id_group)) ?? [];

  const add = useMutation(
    trpc.launches.addGroups.mutationOptions({
      onSuccess: async (_out, input) => {
        setDone(input.create ? "Grupos criados." : "Grupos adicionados ao lançamento.");
        setPicked([]);
        await Promise.all([queryClient.invalidateQueries(trpc.launches.info.queryFilter()), queryClient.invalidateQueries(trpc.launches.list.queryFilter())]);
      },
    }),
  );

  function onCreate(e: FormEvent) {
    e.preventDefault();
    setDone(undefined);
    add.mutate({ id_launch: id, create: Math.trunc(Number(count)) });
  }
  function onAdopt(e: FormEvent) {
    e.preventDefault();
    setDone(undefined);
    add.mutate({ id_launch: id, adopt: { id_channel: channelId, groups: picked } });
  }
  const usable = channels.data?.filter((c) => channelIds.includes(c.id_channel)) ?? [];

  return (
    <details className="add-groups">
      <summary>Adicionar grupos</summary>
      <div className="stack">
        <form className="row align-end wrap" onSubmit={onCreate}>
          <label className="field">
            <span>Criar grupos pelo modelo</span>
            <input type="number" min={1} max={20} value={count} onChange={(e) => setCount(e.target.value)} required />
          </label>
          <button type="submit" className="btn" disabled={add.isPending}>
            Criar agora
          </button>
        </form>
        <form className="stack" onSubmit={onAdopt}>
          <div className="row align-end wrap">
            <label className="field">
              <span>Canal dos grupos existentes</span>
              <select
                value={channelId}
                onChange={(e) => {
                  setChannelId(e.target.value);
                  setPicked([]);
                }}
                required
              >
                {usable.map((c) => (
                  <option key={c.id_channel} value={c.id_channel}>
                    {c.name}
                  </option>
                ))}
              </select>
            </label>
            <span className="muted small">
              {picked.length ? `${picked.length} escolhidos, na ordem em que entram no lançamento` : "Marque os grupos na ordem desejada"}
            </span>
          </div>
          {groups.isPending && channelId ? (
            <p className="muted">Carregando grupos…</p>
          ) : candidates.length === 0 ? (
            <p className="muted">Nenhum grupo deste canal fora do lançamento.</p>
          ) : (
            <ul className="check-grid" aria-label="Grupos para adotar">
              {candidates.map((g) => (
                <li key={g.id_group}>
                  <label className="check" title={g.id_group}>
                    <input
                      type="checkbox"
                      checked={picked.includes(g.id_group)}
                      onChange={(e) => setPicked((p) => (e.target.checked ? [...p, g.id_group] : p.filter((x) => x !== g.id_group)))}
                    />
                    {g.name}
                  </label>
                </li>
              ))}
            </ul>
          )}
          <div>
            <button type="submit" className="btn" disabled={add.isPending || picked.length === 0}>
              Adotar grupos escolhidos
            </button>
          </div>
        </form>
        <ErrorAlert error={groups.error ?? add.error} />
        {done && (
          <p className="alert alert-success" role="status">
            {done}
          </p>
        )}
      </div>
    </details>
  );
}
