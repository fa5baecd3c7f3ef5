"use client";

import { parseVariations, renderVariant, variantCount } from "../../../../server/dispatch/variations";

/** How many previews the composer shows. */
const shown = 3;

/** What previews put in the variables: a stand-in group name, and now. */
export const previewValues = (groupName?: string) => ({ groupName: groupName ?? "Nome do grupo", at: new Date() });

/**
 * Under a text field of the composer: how many variations the text makes and three of them
 * (docs/decisions.md#message-variations), or why it would be refused. Nothing for a plain text.
 */
export function VariationsPreview({ text, label, groupName }: { text: string; label: string; groupName?: string }) {
  if (!/[{}]/.test(text)) return null;
  const parsed = parseVariations(text);
  if (!parsed.ok) {
    return (
      <p className="alert alert-error small" role="alert" data-testid="variations-error">
        {label}: {parsed.error}
      </p>
    );
  }
  const count = variantCount(parsed.parts);
  const values = previewValues(groupName);
  const previews = Array.from({ length: Math.min(count, shown) }, (_, i) => renderVariant(parsed.parts, i, values));
  return (
    <div className="variations" data-testid="variations-preview">
      <p className="small">
        <strong data-testid="variations-count">
          {count} {count === 1 ? "variação" : "variações"}
        </strong>{" "}
        <span className="muted">— cada grupo recebe uma delas, sempre a mesma para o mesmo grupo.</span>
      </p>
      <ol className="variations-list">
        {previews.map((p, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the previews are the text's first variants, in order.
          <li key={i} className="variation small">
            {p}
          </li>
        ))}
      </ol>
    </div>
  );
}
