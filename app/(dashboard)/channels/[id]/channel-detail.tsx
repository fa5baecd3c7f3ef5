"use client";

import { skipToken, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Breadcrumb, DetailUnavailable, EmptyState, ErrorAlert, Loading, PageHeader, StatusBadge } from "../../../_components/ui";
import { useTRPC } from "../../../_lib/trpc";
import { HealthBadge } from "../../../_components/number-health";
import { DisconnectButton, PairingPanel } from "./pairing-panel";
import { useCan } from "../../role-context";

export function ChannelDetail({ id }: { id: string }) {
  // Pairing is an editor's (the channel's use), disconnecting an admin's (docs/team.md#roles).
  const canPair = useCan("editor");
  const canDisconnect = useCan("admin");
  const trpc = useTRPC();
  const channels = useQuery(
    trpc.channels.list.queryOptions(undefined, {
      refetchInterval: (q) => (q.state.data?.find((c) => c.id_channel === id)?.status === "connected" ? false : 2000),
    }),
  );
  const channel = channels.data?.find((c) => c.id_channel === id);
  // The number's health (a ban, a cool-down) beside its connection status.
  const info = useQuery(trpc.channels.info.queryOptions(channel ? { id_channel: id } : skipToken, { refetchInterval: 10_000 }));
  const groups = useQuery(trpc.channels.groupsDetailed.queryOptions(channel?.status === "connected" ? { id_channel: id } : skipToken));
  const [search, setSearch] = useState("");

  if (channels.isPending) return <Loading />;
  if (channels.error) return <ErrorAlert error={channels.error} />;
  if (!channel) return <DetailUnavailable href="/channels" label="Canais" notFound="Canal não encontrado" />;

  const needle = search.trim().toLowerCase();
  const shown = groups.data?.groups.filter((g) => !needle || g.name.toLowerCase().includes(needle) || g.id_group.includes(needle)) ?? [];

  return (
    <>
      <Breadcrumb href="/channels" label="Canais" current={channel.name} />
      <PageHeader
        title={channel.name}
        description={
          <>
            <StatusBadge status={channel.status} /> {info.data && <HealthBadge health={info.data.health} />} <code className="muted">{channel.id_channel}</code>
          </>
        }
        actions={canDisconnect && channel.status === "connected" ? <DisconnectButton id={id} /> : undefined}
      />
      {canPair && channel.status !== "connected" && <PairingPanel id={id} status={channel.status} />}
      <section className="card">
        <div className="row space-between">
          <h2>Grupos{groups.data ? ` (${groups.data.total_groups})` : ""}</h2>
          <label className="field search">
            <span className="sr-only">Buscar grupos</span>
            <input type="search" placeholder="Buscar por nome ou id" value={search} onChange={(e) => setSearch(e.target.value)} />
          </label>
        </div>
        {channel.status !== "connected" ? (
          <EmptyState>
            {channel.status === "connecting"
              ? "O canal ainda está conectando. Os grupos aparecem assim que a conexão for concluída."
              : "O canal está desconectado: não é possível consultar os grupos agora."}
          </EmptyState>
        ) : groups.isPending ? (
          <Loading label="Carregando grupos…" />
        ) : groups.error ? (
          <ErrorAlert error={groups.error} />
        ) : shown.length === 0 ? (
          <EmptyState>Nenhum grupo encontrado.</EmptyState>
        ) : (
          <table className="table" aria-label="Grupos do canal">
            <thead>
              <tr>
                <th scope="col">Nome</th>
                <th scope="col">ID do grupo</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((g) => (
                <tr key={g.id_group}>
                  <td>
                    {g.name}{" "}
                    {g.admins_only && (
                      <span
                        className="badge badge-info"
                        title="Só administradores podem enviar mensagens neste grupo: o envio falha se este número não for admin."
                      >
                        Só admins
                      </span>
                    )}
                  </td>
                  <td>
                    <code>{g.id_group}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}
