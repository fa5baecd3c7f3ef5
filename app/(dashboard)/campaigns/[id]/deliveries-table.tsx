"use client";

import { useQuery } from "@tanstack/react-query";
import { EmptyState } from "../../../_components/ui";
import { deliveryStateLabel, formatDateTime, formatDayTimeSeconds } from "../../../_lib/format";
import { useTRPC, type RouterOutputs } from "../../../_lib/trpc";

type Delivery = RouterOutputs["campaigns"]["deliveries"][number];

/**
 * `sending`: the campaign is running, so a pending group that failed before is waiting for its retry.
 * `readsAvailable` false: the provider never reports group reads, so "Lido em" says so instead of "—".
 */
export function DeliveriesTable({ deliveries, sending, readsAvailable = true }: { deliveries: Delivery[]; sending: boolean; readsAvailable?: boolean }) {
  const trpc = useTRPC();
  const channels = useQuery(trpc.channels.list.queryOptions());
  const channelName = (id: string) => channels.data?.find((c) => c.id_channel === id)?.name ?? id;
  // The channel is worth a column only when the segment spans several.
  const severalChannels = new Set(deliveries.map((d) => d.id_channel)).size > 1;
  if (deliveries.length === 0) return <EmptyState>Nenhum grupo nesta campanha.</EmptyState>;
  return (
    <div className="table-scroll">
      <table className="table" aria-label="Entregas por grupo">
        <thead>
          <tr>
            <th scope="col">Grupo</th>
            {severalChannels && <th scope="col">Canal</th>}
            <th scope="col">Situação</th>
            <th scope="col" className="num">
              Tentativas
            </th>
            <th scope="col">Erro</th>
            <th scope="col">Enviado em</th>
            <th scope="col">Lido em</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((d) => (
            <tr key={`${d.id_channel}:${d.id_group}:${d.monitoring}`}>
              <td className="nowrap">
                {d.name}{" "}
                {d.monitoring && (
                  <span className="badge badge-info" title="Recebe uma cópia para você acompanhar a campanha">
                    Monitoramento
                  </span>
                )}
              </td>
              {severalChannels && <td className="nowrap">{channelName(d.id_channel)}</td>}
              <td>
                <span className={`badge badge-delivery-${d.state}`}>{deliveryStateLabel[d.state] ?? d.state}</span>
                {sending && d.state === "pending" && d.attempts > 0 && <div className="muted small nowrap">nova tentativa</div>}
              </td>
              <td className="num">{d.attempts}</td>
              <td className="error-cell">{d.error ? <span className="text-danger">{d.error}</span> : <span className="muted">—</span>}</td>
              <td className="nowrap" title={d.sent_at ? `${formatDateTime(d.sent_at)}${d.acked_at ? ` · recebido ${formatDayTimeSeconds(d.acked_at)}` : ""}` : undefined}>{formatDayTimeSeconds(d.sent_at)}</td>
              <td className="nowrap">
                {readsAvailable ? formatDayTimeSeconds(d.read_at) : <span className="muted" title="Leituras indisponíveis neste provedor">indisponível</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
