"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { EmptyState } from "../../../_components/ui";
import { deliveryStateLabel, formatDateTime, formatDayTimeSeconds } from "../../../_lib/format";
import { useTRPC, type RouterOutputs } from "../../../_lib/trpc";

type Delivery = RouterOutputs["campaigns"]["deliveries"][number];

/** The error of a send whose outcome stayed unknown (server/dispatch/record-delivery.ts). */
const outcomeUnknown = (error: string | null) => error === "outcome unknown" || Boolean(error?.startsWith("outcome unknown:"));

/**
 * `sending`: the campaign is running, so a pending group that failed before is waiting for its retry.
 * `readsAvailable` false: the provider never reports group reads, so "Lido em" says so instead of "—".
 */
export function DeliveriesTable({
  deliveries,
  sending,
  campaignId,
  readsAvailable = true,
}: {
  deliveries: Delivery[];
  sending: boolean;
  campaignId: string;
  readsAvailable?: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const resend = useMutation(
    trpc.campaigns.resendDelivery.mutationOptions({
      onSuccess: () =>
        Promise.all([
          queryClient.invalidateQueries(trpc.campaigns.info.queryFilter({ id_campaign: campaignId })),
          queryClient.invalidateQueries(trpc.campaigns.deliveries.queryFilter({ id_campaign: campaignId })),
          queryClient.invalidateQueries(trpc.campaigns.list.queryFilter()),
        ]),
    }),
  );
  const sendAgain = (d: Delivery) => {
    const warning = outcomeUnknown(d.error)
      ? `Não sabemos se a mensagem chegou ao grupo "${d.name}": o provedor não respondeu e ela não pôde ser verificada. Enviar novamente pode duplicar a mensagem no grupo. Enviar mesmo assim?`
      : `Enviar novamente para o grupo "${d.name}"?`;
    if (window.confirm(warning)) resend.mutate({ id_campaign: campaignId, id_group: d.id_group });
  };
  const channels = useQuery(trpc.channels.list.queryOptions());
  const channelName = (id: string) => channels.data?.find((c) => c.id_channel === id)?.name ?? id;
  // The channel is worth a column only when the segment spans several.
  const severalChannels = new Set(deliveries.map((d) => d.id_channel)).size > 1;
  // Variations: the text each group got (docs/decisions.md#message-variations).
  const variations = deliveries.some((d) => d.text !== null);
  if (deliveries.length === 0) return <EmptyState>Nenhum grupo nesta campanha.</EmptyState>;
  return (
    <div className="table-scroll">
      <table className="table" aria-label="Entregas por grupo">
        <thead>
          <tr>
            <th scope="col">Grupo</th>
            {severalChannels && <th scope="col">Canal</th>}
            <th scope="col">Situação</th>
            {variations && <th scope="col">Texto enviado</th>}
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
              {variations && (
                <td className="sent-text" data-testid="sent-text">
                  {d.text ?? <span className="muted">—</span>}
                </td>
              )}
              <td className="num">{d.attempts}</td>
              <td className="error-cell">
                {d.state === "sending" && outcomeUnknown(d.error) ? (
                  <span className="muted">sem resposta do provedor; verificando se foi entregue</span>
                ) : d.error ? (
                  <span className="text-danger">
                    {outcomeUnknown(d.error) && d.state === "failed" ? "resultado desconhecido (não reenviado automaticamente)" : d.error}
                  </span>
                ) : (
                  <span className="muted">—</span>
                )}
                {d.state === "failed" && !d.monitoring && (
                  <div>
                    <button type="button" className="btn btn-small" disabled={resend.isPending} onClick={() => sendAgain(d)}>
                      Enviar novamente
                    </button>
                  </div>
                )}
              </td>
              <td
                className="nowrap"
                title={d.sent_at ? `${formatDateTime(d.sent_at)}${d.acked_at ? ` · recebido ${formatDayTimeSeconds(d.acked_at)}` : ""}` : undefined}
              >
                {formatDayTimeSeconds(d.sent_at)}
              </td>
              <td className="nowrap">
                {readsAvailable ? (
                  formatDayTimeSeconds(d.read_at)
                ) : (
                  <span className="muted" title="Leituras indisponíveis neste provedor">
                    indisponível
                  </span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
