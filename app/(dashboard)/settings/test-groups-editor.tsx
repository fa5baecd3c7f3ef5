"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Field } from "../../_components/ui";
import { useTRPC } from "../../_lib/trpc";
import { testGroupsMax } from "@/server/settings/schema";
import type { Settings } from "./settings-fields";

type TestGroups = Settings["test_groups"];

/**
 * "Grupos de teste" (API: settings `test_groups`; docs/decisions.md#test-send): up to five groups that "Enviar teste"
 * in the composer sends to. Saved with the rest of the form; the server checks each channel reaches its group.
 */
export function TestGroupsEditor({ value, onChange, invalid }: { value: TestGroups; onChange: (v: TestGroups) => void; invalid: boolean }) {
  const trpc = useTRPC();
  const channels = useQuery(trpc.channels.list.queryOptions());
  const [channel, setChannel] = useState("");
  const [group, setGroup] = useState("");
  const groups = useQuery({ ...trpc.channels.groupsDetailed.queryOptions({ id_channel: channel }), enabled: channel !== "" });
  const channelName = (id: string) => channels.data?.find((c) => c.id_channel === id)?.name ?? id;
  const full = value.length >= testGroupsMax;
  const taken = (id: string) => value.some((g) => g.id_channel === channel && g.id_group === id);

  return (
    <div className="stack" aria-invalid={invalid || undefined}>
      {value.length === 0 ? (
        <p className="muted small">Nenhum grupo de teste. Sem eles, "Enviar teste" não tem para onde enviar.</p>
      ) : (
        <ul className="test-groups" aria-label="Grupos de teste">
          {value.map((g) => (
            <li key={`${g.id_channel}:${g.id_group}`} className="row wrap">
              <span>
                {g.id_group} <span className="muted small">({channelName(g.id_channel)})</span>
              </span>
              <button type="button" className="btn btn-small" onClick={() => onChange(value.filter((x) => x !== g))}>
                Remover
              </button>
            </li>
          ))}
        </ul>
      )}
      <div className="row align-end wrap">
        <Field label="Canal">
          {(c) => (
            <select
              {...c}
              value={channel}
              disabled={full}
              onChange={(e) => {
                setChannel(e.target.value);
                setGroup("");
              }}
            >
              <option value="">Escolha um canal</option>
              {channels.data?.map((ch) => (
                <option key={ch.id_channel} value={ch.id_channel}>
                  {ch.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Grupo de teste">
          {(c) => (
            <select {...c} value={group} disabled={full || !groups.data} onChange={(e) => setGroup(e.target.value)}>
              <option value="">Escolha um grupo</option>
              {groups.data?.groups.map((g) => (
                <option key={g.id_group} value={g.id_group} disabled={taken(g.id_group)}>
                  {g.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button
          type="button"
          className="btn"
          disabled={full || !group}
          onClick={() => {
            onChange([...value, { id_channel: channel, id_group: group }]);
            setGroup("");
          }}
        >
          Adicionar grupo de teste
        </button>
      </div>
      <p className="muted small hint">Até {testGroupsMax} grupos. Salve as configurações para valer.</p>
    </div>
  );
}
