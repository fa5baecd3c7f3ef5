"use client";

import { skipToken, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ErrorAlert } from "../../../_components/ui";
import { useTRPC, type RouterOutputs } from "../../../_lib/trpc";

type Segment = RouterOutputs["segments"]["get"];
type Channel = RouterOutputs["channels"]["list"][number];

/** Set (first time) or change the segment's monitoring group: a channel, then one of its groups outside the segment. */
export function MonitoringGroupForm({ segment, channels }: { segment: Segment; channels: Channel[] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const current = segment.monitoring_group;
  const [channelId, setChannelId] = useState(current?.id_channel ?? segment.id_channel[0] ?? "");
  const [groupId, setGroupId] = useState("");
  const [saved, setSaved] = useState(false);

  const groups = useQuery(trpc.channels.groups.queryOptions(channelId ? { id_channel: channelId } : skipToken));
  const inSegment = new Set(segment.groups.map((g) => g.id_group));
  const candidates = groups.data?.groups.filter((g) => !inSegment.has(g.id_group)) ?? [];

  const onSuccess = async () => {
    setSaved(true);
    setGroupId("");
    await Promise.all([
      queryClient.invalidateQueries(trpc.segments.get.queryFilter({ id_segment: segment.id_segment })),
      queryClient.invalidateQueries(trpc.segments.list.queryFilter()),
    ]);
  };
  const create = useMutation(trpc.segments.createMonitoringGroup.mutationOptions({ onSuccess }));
  const edit = useMutation(trpc.segments.editMonitoringGroup.mutationOptions({ onSuccess }));
  const pending = create.isPending || edit.isPending;

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    setSaved(false);
    const input = { id_segment: segment.id_segment, id_channel: channelId, id_group: groupId };
    if (current) edit.mutate(input);
    else create.mutate(input);
  }

  const usable = channels.filter((c) => c.status === "connected" || c.id_channel === channelId);
  return (
    <form className="row align-end wrap" onSubmit={onSubmit}>
      <label className="field">
        <span>Canal do grupo de monitoramento</span>
        <select
          value={channelId}
          onChange={(e) => {
            setChannelId(e.target.value);
            setGroupId("");
          }}
          required
        >
          <option value="" disabled>
            Escolha um canal
          </option>
          {usable.map((c) => (
            <option key={c.id_channel} value={c.id_channel}>
              {c.name}
            </option>
          ))}
        </select>
      </label>
      <label className="field grow">
        <span>Grupo de monitoramento</span>
        <select value={groupId} onChange={(e) => setGroupId(e.target.value)} required disabled={!channelId || groups.isPending}>
          <option value="" disabled>
            {groups.isPending && channelId ? "Carregando grupos…" : candidates.length ? "Escolha um grupo fora do segmento" : "Nenhum grupo disponível"}
          </option>
          {candidates.map((g) => (
            <option key={g.id_group} value={g.id_group} disabled={g.id_group === current?.id_group}>
              {g.name}
              {g.id_group === current?.id_group ? " (atual)" : ""}
            </option>
          ))}
        </select>
      </label>
      <button className="btn btn-primary" type="submit" disabled={pending || !groupId}>
        {pending ? "Salvando…" : current ? "Alterar grupo de monitoramento" : "Definir grupo de monitoramento"}
      </button>
      <div className="full">
        <ErrorAlert error={groups.error ?? create.error ?? edit.error} />
        {saved && (
          <p className="alert alert-success" role="status">
            Grupo de monitoramento salvo.
          </p>
        )}
      </div>
    </form>
  );
}
