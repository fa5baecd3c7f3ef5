"use client";

import { useState } from "react";
import { ErrorAlert } from "../../../_components/ui";
import { useTRPCClient } from "../../../_lib/trpc";
import { downloadFile } from "./download-file";

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
      downloadFile(answer.file, `participantes-${slug}.csv`);
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
