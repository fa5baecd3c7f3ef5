"use client";

import { campaignLimits } from "../../../../server/campaigns/limits";
import { emptyButton, emptyCard, type CardDraft } from "./draft";
import { urlMaxLength } from "../../../../server/text-limits";

const carouselLimits = campaignLimits.carousel;

/** The carousel's 1–4 cards, each with an image, a text and up to 2 link buttons. */
export function CardsEditor({
  cards,
  onChange,
  httpsPattern,
  httpsTitle,
}: {
  cards: CardDraft[];
  onChange: (cards: CardDraft[]) => void;
  httpsPattern: string;
  httpsTitle: string;
}) {
  const setCard = (i: number, patch: Partial<CardDraft>) => onChange(cards.map((c, j) => (j === i ? { ...c, ...patch } : c)));
  return (
    <div className="stack">
      {cards.map((card, i) => {
        const n = i + 1;
        return (
          <fieldset key={card.key} className="card-editor">
            <legend className="sr-only">Cartão {n}</legend>
            <div className="row space-between">
              <strong aria-hidden="true">Cartão {n}</strong>
              {cards.length > 1 && (
                <button type="button" className="btn btn-ghost-danger btn-small" onClick={() => onChange(cards.filter((_, j) => j !== i))}>
                  Remover cartão<span className="sr-only"> {n}</span>
                </button>
              )}
            </div>
            <label className="field">
              <span>
                URL da imagem<span className="sr-only"> do cartão {n}</span>
              </span>
              <input
                type="url"
                value={card.image_url}
                onChange={(e) => setCard(i, { image_url: e.target.value })}
                required
                maxLength={urlMaxLength}
                pattern={httpsPattern}
                title={httpsTitle}
                placeholder="https://exemplo.com.br/imagens/produto.jpg"
              />
            </label>
            <label className="field">
              <span>
                Texto<span className="sr-only"> do cartão {n}</span>
              </span>
              <textarea value={card.text} onChange={(e) => setCard(i, { text: e.target.value })} required maxLength={carouselLimits.cardText} rows={2} />
            </label>
            {card.buttons.map((b, k) => {
              const setButton = (patch: Partial<typeof b>) => setCard(i, { buttons: card.buttons.map((x, y) => (y === k ? { ...x, ...patch } : x)) });
              return (
                <div key={b.key} className="row align-end wrap button-editor">
                  <label className="field">
                    <span>
                      Rótulo do botão {k + 1}
                      <span className="sr-only"> do cartão {n}</span>
                    </span>
                    <input
                      value={b.label}
                      onChange={(e) => setButton({ label: e.target.value })}
                      required
                      maxLength={carouselLimits.buttonLabel}
                      placeholder="Ex.: Quero minha vaga"
                    />
                  </label>
                  <label className="field grow">
                    <span>
                      Link do botão {k + 1}
                      <span className="sr-only"> do cartão {n}</span>
                    </span>
                    <input
                      type="url"
                      value={b.url}
                      onChange={(e) => setButton({ url: e.target.value })}
                      required
                      maxLength={urlMaxLength}
                      pattern={httpsPattern}
                      title={httpsTitle}
                      placeholder="https://…"
                    />
                  </label>
                  <button
                    type="button"
                    className="btn btn-ghost-danger"
                    onClick={() => setCard(i, { buttons: card.buttons.filter((_, y) => y !== k) })}
                    aria-label={`Remover o botão ${k + 1} do cartão ${n}`}
                  >
                    Remover
                  </button>
                </div>
              );
            })}
            {card.buttons.length < carouselLimits.buttonsPerCard && (
              <div>
                <button type="button" className="btn btn-small" onClick={() => setCard(i, { buttons: [...card.buttons, emptyButton()] })}>
                  + Botão de link<span className="sr-only"> no cartão {n}</span>
                </button>
              </div>
            )}
          </fieldset>
        );
      })}
      <div className="row space-between">
        <button type="button" className="btn" disabled={cards.length >= carouselLimits.maxCards} onClick={() => onChange([...cards, emptyCard()])}>
          + Adicionar cartão
        </button>
        <span className="muted small">
          {cards.length} de {carouselLimits.maxCards} cartões · até {carouselLimits.buttonsPerCard} botões por cartão
        </span>
      </div>
    </div>
  );
}
