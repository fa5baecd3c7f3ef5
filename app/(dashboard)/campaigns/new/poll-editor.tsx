"use client";

import { campaignLimits } from "../../../../server/campaigns/limits";
import { emptyPollOption, type PollOptionDraft } from "./draft";

const pollLimits = campaignLimits.poll;

/** A poll's 2–12 options (Opções; fewer where the platform takes fewer), distinct, and whether a voter may choose several. */
export function PollEditor({
  options,
  multipleAnswers,
  maxOptions,
  onChange,
}: {
  options: PollOptionDraft[];
  multipleAnswers: boolean;
  /** The platform's limit (Evolution API: 10). */
  maxOptions: number;
  onChange: (patch: { poll_options?: PollOptionDraft[]; multiple_answers?: boolean }) => void;
}) {
  const setOption = (i: number, text: string) => onChange({ poll_options: options.map((o, j) => (j === i ? { ...o, text } : o)) });
  const key = (text: string) => text.trim().toLocaleLowerCase("pt-BR");
  return (
    <fieldset className="stack poll-editor">
      <legend className="field-label">Opções</legend>
      {options.map((o, i) => {
        const n = i + 1;
        const repeated = o.text.trim() !== "" && options.slice(0, i).some((p) => key(p.text) === key(o.text));
        return (
          <div key={o.key} className="row align-end poll-option-editor">
            <div className="grow">
              <label className="field">
                <span>Opção {n}</span>
                <input
                  value={o.text}
                  onChange={(e) => setOption(i, e.target.value)}
                  required
                  maxLength={pollLimits.option}
                  placeholder={n === 1 ? "Ex.: Segunda às 20h" : undefined}
                  aria-invalid={repeated || undefined}
                />
              </label>
              {repeated && (
                <small className="text-danger" role="alert">
                  A opção {n} repete outra: as opções precisam ser diferentes.
                </small>
              )}
            </div>
            {options.length > pollLimits.minOptions && (
              <button
                type="button"
                className="btn btn-ghost-danger"
                onClick={() => onChange({ poll_options: options.filter((_, j) => j !== i) })}
                aria-label={`Remover a opção ${n}`}
              >
                Remover
              </button>
            )}
          </div>
        );
      })}
      <div className="row space-between wrap">
        <button
          type="button"
          className="btn"
          disabled={options.length >= maxOptions}
          onClick={() => onChange({ poll_options: [...options, emptyPollOption()] })}
        >
          + Adicionar opção
        </button>
        <span className="muted small">
          {options.length} de {maxOptions} opções
        </span>
      </div>
      <label className="check">
        <input type="checkbox" checked={multipleAnswers} onChange={(e) => onChange({ multiple_answers: e.target.checked })} />
        Permitir várias respostas
      </label>
      <p className="muted small hint">Sem esta opção, cada pessoa escolhe uma só. Os votos aparecem na página da campanha conforme chegam.</p>
    </fieldset>
  );
}

/** Two options repeat (compared as the API does: trimmed, without case). */
export const repeatsAnOption = (options: PollOptionDraft[]) => new Set(options.map((o) => o.text.trim().toLocaleLowerCase("pt-BR"))).size !== options.length;
