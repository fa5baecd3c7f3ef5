/** Saves a `{file}` answer (launch-members, launch-leads) in the browser; its content already starts with the BOM spreadsheets need. */
export function downloadFile(file: { content: string; content_type: string; file_name: string }, fallbackName: string) {
  const blob = new Blob([file.content], { type: file.content_type });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = file.file_name || fallbackName;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
