"use client";

import { useState } from "react";
import { ErrorAlert } from "../../../_components/ui";
import { useTRPCClient } from "../../../_lib/trpc";

/**
 * The participants as a CSV file (UTF-8 with a BOM, as launch-members serves it), downloaded through
 * the dashboard session: comma for most spreadsheets, semicolon for those set to Portuguese.
 */
export function MembersExport({ id, slug }: { id: string; slug: string }) {
  const client = useTRPCClient();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  async function download(delimiter: "comma" | "semicolon") {
    setBusy(true);
    setError(undefined);
    try {
      const answer = await client.launchStats.members.query({ id_launch: id, format: "csv", delimiter });
      if (!("file" in answer)) throw new Error("O servidor não devolveu o arquivo CSV.");
      // The content already starts with the BOM the spreadsheets need to read accents.
      const blob = new Blob([answer.file.content], { type: answer.file.content_type });
      const url = URL.createObjectURL(blob);
      const a = document.createElement("a");
      a.href = url;
      a.download = answer.file.file_name || `participantes-${slug}.csv`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="stack tight">
      <div className="row wrap">
        <button type="button" className="btn" disabled={busy} onClick={() => download("comma")}>
          Exportar CSV
        </button>
        <button type="button" className="btn btn-ghost" disabled={busy} onClick={() => download("semicolon")}>
          CSV com ponto e vírgula (Excel em português)
        </button>
      </div>
      <ErrorAlert error={error} />
    </div>
  );
}
