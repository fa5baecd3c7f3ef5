/**
 * The HTML pages of the public link (docs/decisions.md#launches, "The link"), pt-BR: the Open Graph page
 * for link-preview fetchers, the "groups closed" page and the unknown-link page. Everything that comes
 * from a launch is escaped; the pages load nothing (inline style only), so the pages' CSP holds.
 */
const entities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => entities[c] as string);

const style =
  "body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;background:#f4f5f7;" +
  "font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1f2933}" +
  "main{max-width:28rem;margin:1.5rem;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.08);text-align:center}" +
  "h1{font-size:1.35rem;margin:0 0 .75rem}p{margin:0;line-height:1.5;color:#52606d}";

function page(title: string, body: string, head = ""): string {
  return (
    `<!doctype html><html lang="pt-BR"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${escapeHtml(title)}</title>${head}<style>${style}</style></head><body><main>${body}</main></body></html>`
  );
}

export interface PreviewContent {
  name: string;
  description?: string;
  imageUrl?: string;
  joinUrl: string;
}

/** For WhatsApp, Instagram (facebookexternalhit), Telegram and the like: the launch's name, description and image. */
export function previewPage(c: PreviewContent): string {
  const meta = [
    ["og:type", "website"],
    ["og:title", c.name],
    ["og:url", c.joinUrl],
    ["og:locale", "pt_BR"],
    ...(c.description ? [["og:description", c.description]] : []),
    ...(c.imageUrl ? [["og:image", c.imageUrl]] : []),
  ]
    .map(([property, content]) => `<meta property="${property}" content="${escapeHtml(content as string)}">`)
    .join("");
  const twitter =
    `<meta name="twitter:card" content="${c.imageUrl ? "summary_large_image" : "summary"}">` +
    (c.description ? `<meta name="description" content="${escapeHtml(c.description)}">` : "");
  const body = `<h1>${escapeHtml(c.name)}</h1>${c.description ? `<p>${escapeHtml(c.description)}</p>` : ""}`;
  return page(c.name, body, meta + twitter);
}

/** A paused or closed launch without `closed_url`, or one whose groups are all full. */
export function closedPage(name: string): string {
  return page(
    `${name}: grupos fechados`,
    `<h1>Os grupos estão fechados</h1><p>As vagas dos grupos de <strong>${escapeHtml(name)}</strong> estão encerradas no momento. ` +
      "Fique de olho nos canais oficiais para saber quando novas vagas forem abertas.</p>",
  );
}

export function notFoundPage(): string {
  return page(
    "Link não encontrado",
    "<h1>Link não encontrado</h1><p>Este link de grupos não existe ou foi digitado errado. Confira o endereço e tente de novo.</p>",
  );
}
