"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ErrorAlert } from "../../../_components/ui";
import { useTRPC } from "../../../_lib/trpc";
import { nameMaxLength } from "../../../../server/text-limits";

export function RenameSegment({ id, name }: { id: string; name: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const rename = useMutation(
    trpc.segments.edit.mutationOptions({
      onSuccess: async () => {
        await Promise.all([
          queryClient.invalidateQueries(trpc.segments.get.queryFilter({ id_segment: id })),
          queryClient.invalidateQueries(trpc.segments.list.queryFilter()),
        ]);
        setEditing(false);
      },
    }),
  );

  if (!editing) {
    return (
      <button type="button" className="btn" onClick={() => setEditing(true)}>
        Renomear segmento
      </button>
    );
  }
  function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    rename.mutate({ id_segment: id, name: String(new FormData(e.currentTarget).get("name")).trim() });
  }
  return (
    <form className="row" onSubmit={onSubmit}>
      <label className="sr-only" htmlFor="segment-name">
        Novo nome do segmento
      </label>
      <input id="segment-name" name="name" defaultValue={name} required maxLength={nameMaxLength} autoFocus />
      <button type="submit" className="btn btn-primary" disabled={rename.isPending}>
        Salvar
      </button>
      <button type="button" className="btn btn-ghost" onClick={() => setEditing(false)}>
        Cancelar
      </button>
      <ErrorAlert error={rename.error} />
    </form>
  );
}
