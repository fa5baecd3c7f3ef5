/**
 * The launches' CSV exports (launch-members, launch-leads) as a stream (docs/launches.md#exports): the BOM and the
 * header first, then one chunk per page of `csvPageRows` rows read by keyset (never OFFSET), each page fetched only
 * when the reader asks for more, so the server holds one page at a time whatever the number of rows. The REST facade
 * writes the stream to the socket as it comes (Context.sendFile); a transport without one (the dashboard's tRPC)
 * gets the file collected into one string, as before.
 */
import type { FileStream } from "../trpc";

/**
 * One CSV field (CONTRACT §6): quoted when it holds either separator (`,` or `;`, whichever the file uses:
 * a spreadsheet in a `;` locale splits a comma file's unquoted `;`), a quote or a line break; a text a
 * spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR first) gets a leading `'` (OWASP's CSV
 * injection rule).
 */
export function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[,;"\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** Rows read per query, and written per chunk, while a CSV streams. */
export const csvPageRows = 1000;

export interface CsvFile {
  content_type: string;
  file_name: string;
}

/**
 * A CSV file as a stream. `page(after)` reads the next `csvPageRows` rows after the cursor (null: from the start) and
 * answers their fields and the cursor of the last row; fewer rows than a page ends the file.
 */
export function csvStream<C>(columns: readonly string[], sep: string, page: (after: C | null) => Promise<{ rows: string[][]; last: C | null }>) {
  const encoder = new TextEncoder();
  let after: C | null = null;
  let started = false;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!started) {
          started = true;
          controller.enqueue(encoder.encode(`\uFEFF${columns.join(sep)}\r\n`));
          return;
        }
        const { rows, last } = await page(after);
        if (rows.length > 0) controller.enqueue(encoder.encode(rows.map((r) => `${r.map(csvField).join(sep)}\r\n`).join("")));
        after = last;
        if (rows.length < csvPageRows || last === null) controller.close();
      },
    },
    { highWaterMark: 1 },
  );
}

/**
 * The procedure's `{file}` answer: the stream handed to the transport that writes it as it comes (the content left
 * empty), or, without one, read into the content.
 */
export async function fileAnswer(file: CsvFile, body: ReadableStream<Uint8Array>, sendFile?: (f: FileStream) => void) {
  if (sendFile) {
    sendFile({ ...file, body });
    return { file: { ...file, content: "" } };
  }
  // Response.text() would drop the BOM spreadsheets need: decode keeping it.
  const content = new TextDecoder("utf-8", { ignoreBOM: true }).decode(await new Response(body).arrayBuffer());
  return { file: { ...file, content } };
}
