import { launchCsvUrl } from "./launch-csv-url";

/**
 * The participants as a CSV file (UTF-8 with a BOM, as launch-members serves it), downloaded through the dashboard
 * session as a stream: comma for most spreadsheets, semicolon for those set to Portuguese.
 */
export function MembersExport({ id }: { id: string }) {
  return (
    <div className="row wrap">
      <a className="btn" href={launchCsvUrl(id, "members")} download>
        Exportar CSV
      </a>
      <a className="btn btn-ghost" href={launchCsvUrl(id, "members", { delimiter: "semicolon" })} download>
        CSV com ponto e vírgula (Excel em português)
      </a>
    </div>
  );
}
