"use client";

import type { ReactNode } from "react";
import { brasiliaParts } from "../../../../server/time/brasilia";
import { fileNameFromUrl, type CardDraft, type MessageDraft } from "./draft";

const urlPattern = /https?:\/\/[^\s]+/;

/**
 * A chat as a group member would see the campaign: a phone frame, the group's header and the
 * outgoing bubble(s). Approximate on purpose: media are placeholders named after their URL.
 */
export function PhonePreview({
  draft,
  groupName,
  groupCount,
  linkPreview,
  scheduled,
}: {
  draft: MessageDraft;
  groupName?: string;
  groupCount?: number;
  /** Whether a link preview would be shown (the campaign's choice or the account's setting). */
  linkPreview: boolean;
  /** "DD/MM/YYYY às HH:mm" and HH:mm when scheduled. */
  scheduled?: { label: string; time: string };
}) {
  const time = scheduled?.time ?? brasiliaParts(new Date()).time;
  return (
    <figure className="phone-wrap" aria-label="Prévia da mensagem">
      <div className="phone" data-testid="phone-preview">
        <div className="phone-notch" aria-hidden="true" />
        <div className="phone-header">
          <div className="phone-avatar" aria-hidden="true">
            <GroupIcon />
          </div>
          <div className="phone-title">
            <strong>{groupName ?? "Grupo do segmento"}</strong>
            <small>
              {groupCount !== undefined ? `${groupCount} ${groupCount === 1 ? "grupo recebe" : "grupos recebem"} esta mensagem` : "escolha um segmento"}
            </small>
          </div>
        </div>
        <div className="phone-chat">
          <div className="chat-day">{scheduled ? scheduled.label : "Hoje"}</div>
          {draft.kind === "poll" ? (
            <Bubble time={time} mentionAll={false}>
              <PollPreview draft={draft} />
            </Bubble>
          ) : draft.kind === "carousel" ? (
            <>
              {draft.message.trim() && (
                <Bubble time={time} mentionAll={draft.mention_all}>
                  <ChatText text={draft.message} linkPreview={linkPreview} />
                </Bubble>
              )}
              <section className="carousel-row" aria-label="Cartões do carrossel">
                {draft.cards.map((card, i) => (
                  <CarouselCard key={card.key} card={card} index={i} />
                ))}
              </section>
              {!draft.message.trim() && draft.mention_all && <p className="chat-note">Menciona todos os participantes</p>}
            </>
          ) : (
            <Bubble time={time} mentionAll={draft.mention_all} media={draft.kind !== "text"}>
              {draft.kind !== "text" && <MediaPlaceholder draft={draft} />}
              {draft.kind === "text" && !draft.message.trim() ? (
                <span className="chat-placeholder">Sua mensagem aparece aqui.</span>
              ) : (
                draft.kind !== "audio" && draft.message.trim() && <ChatText text={draft.message} linkPreview={linkPreview && draft.kind === "text"} />
              )}
            </Bubble>
          )}
        </div>
        <div className="phone-input" aria-hidden="true">
          <span>Mensagem</span>
        </div>
      </div>
      <figcaption className="muted small">Prévia aproximada: cada aplicativo exibe a mensagem do seu jeito.</figcaption>
    </figure>
  );
}

/** A poll as WhatsApp draws it: the question, how many may be chosen, one row per option with an empty bar. */
function PollPreview({ draft }: { draft: MessageDraft }) {
  return (
    <div className="chat-poll" data-testid="poll-preview">
      <p className="chat-poll-question">{draft.message.trim() || <span className="chat-placeholder">Sua pergunta aparece aqui.</span>}</p>
      <small className="chat-poll-hint">{draft.multiple_answers ? "Selecione uma ou mais opções" : "Selecione uma opção"}</small>
      <ul className="chat-poll-options">
        {draft.poll_options.map((o, i) => (
          <li key={o.key}>
            <span className={draft.multiple_answers ? "chat-poll-box" : "chat-poll-radio"} aria-hidden="true" />
            <span className="chat-poll-text">{o.text.trim() || `Opção ${i + 1}`}</span>
            <span className="chat-poll-bar" aria-hidden="true" />
          </li>
        ))}
      </ul>
      <span className="chat-poll-votes">Ver votos</span>
    </div>
  );
}

function Bubble({ children, time, mentionAll, media }: { children: ReactNode; time: string; mentionAll: boolean; media?: boolean }) {
  return (
    <div className={media ? "bubble bubble-media" : "bubble"}>
      {children}
      <div className="bubble-meta">
        {mentionAll && <span className="bubble-mention">@todos</span>}
        <span suppressHydrationWarning>{time}</span>
        <CheckIcon />
      </div>
    </div>
  );
}

/** The text with the chat's own markup (*negrito*, _itálico_, ~riscado~) and links, plus a link preview when on. */
function ChatText({ text, linkPreview }: { text: string; linkPreview: boolean }) {
  const link = linkPreview ? urlPattern.exec(text)?.[0] : undefined;
  let host = "";
  if (link) {
    try {
      host = new URL(link).hostname;
    } catch {
      host = link;
    }
  }
  return (
    <>
      {link && (
        <div className="link-preview">
          <div className="link-preview-image" aria-hidden="true">
            <LinkIcon />
          </div>
          <div>
            <strong>{host}</strong>
            <small>Prévia do link</small>
          </div>
        </div>
      )}
      <p className="chat-text">{formatChat(text)}</p>
    </>
  );
}

const markup = /(\*[^*\n]+\*|_[^_\n]+_|~[^~\n]+~|https?:\/\/[^\s]+)/g;

function formatChat(text: string): ReactNode[] {
  // The pieces of one text are redrawn whole whenever it changes: a piece's position is its identity.
  return text.split(markup).map((part, i) => {
    if (i % 2 === 0) return part;
    if (part.startsWith("http"))
      return (
        // biome-ignore lint/suspicious/noArrayIndexKey: see formatChat
        <span key={i} className="chat-link">
          {part}
        </span>
      );
    const inner = part.slice(1, -1);
    // biome-ignore lint/suspicious/noArrayIndexKey: see formatChat
    if (part.startsWith("*")) return <strong key={i}>{inner}</strong>;
    // biome-ignore lint/suspicious/noArrayIndexKey: see formatChat
    if (part.startsWith("_")) return <em key={i}>{inner}</em>;
    // biome-ignore lint/suspicious/noArrayIndexKey: see formatChat
    return <s key={i}>{inner}</s>;
  });
}

function MediaPlaceholder({ draft }: { draft: MessageDraft }) {
  const name = (draft.kind === "document" && draft.file_name.trim()) || fileNameFromUrl(draft.media_url) || "sem arquivo";
  if (draft.kind === "document") {
    const ext = name.includes(".") ? name.split(".").pop()!.toUpperCase().slice(0, 5) : "ARQUIVO";
    return (
      <div className="media-doc">
        <DocIcon />
        <div>
          <strong className="media-name">{name}</strong>
          <small>{ext}</small>
        </div>
      </div>
    );
  }
  if (draft.kind === "audio") {
    return (
      <div className="media-audio">
        <span className="media-play" aria-hidden="true">
          <PlayIcon />
        </span>
        <div className="grow">
          <div className="media-wave" aria-hidden="true" />
          <small className="media-name">{name}</small>
        </div>
      </div>
    );
  }
  return (
    <div className="media-box">
      {draft.kind === "video" ? (
        <span className="media-play big" aria-hidden="true">
          <PlayIcon />
        </span>
      ) : (
        <ImageIcon />
      )}
      <small className="media-name">{name}</small>
    </div>
  );
}

function CarouselCard({ card, index }: { card: CardDraft; index: number }) {
  return (
    <div className="carousel-card">
      <div className="media-box small">
        <ImageIcon />
        <small className="media-name">{fileNameFromUrl(card.image_url) || `imagem do cartão ${index + 1}`}</small>
      </div>
      <p className="carousel-text">{card.text.trim() ? formatChat(card.text) : <span className="chat-placeholder">Texto do cartão {index + 1}</span>}</p>
      {card.buttons.map((b) => (
        <div key={b.key} className="carousel-button">
          <LinkIcon />
          {b.label.trim() || "Botão"}
        </div>
      ))}
    </div>
  );
}

// Small inline icons: no icon font, no emoji (not every system has colour emoji).
const svg = {
  width: 18,
  height: 18,
  viewBox: "0 0 24 24",
  fill: "none",
  stroke: "currentColor",
  strokeWidth: 2,
  strokeLinecap: "round",
  strokeLinejoin: "round",
} as const;

function ImageIcon() {
  return (
    <svg {...svg} width={30} height={30} aria-hidden="true">
      <rect x="3" y="3" width="18" height="18" rx="2" />
      <circle cx="8.5" cy="8.5" r="1.5" />
      <path d="M21 15l-5-5L5 21" />
    </svg>
  );
}

function PlayIcon() {
  return (
    <svg {...svg} fill="currentColor" stroke="none" aria-hidden="true">
      <path d="M8 5v14l11-7z" />
    </svg>
  );
}

function DocIcon() {
  return (
    <svg {...svg} width={30} height={30} aria-hidden="true">
      <path d="M14 2H6a2 2 0 0 0-2 2v16a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V8z" />
      <path d="M14 2v6h6M8 13h8M8 17h5" />
    </svg>
  );
}

function LinkIcon() {
  return (
    <svg {...svg} width={14} height={14} aria-hidden="true">
      <path d="M10 13a5 5 0 0 0 7.54.54l3-3a5 5 0 0 0-7.07-7.07l-1.72 1.71" />
      <path d="M14 11a5 5 0 0 0-7.54-.54l-3 3a5 5 0 0 0 7.07 7.07l1.71-1.71" />
    </svg>
  );
}

function CheckIcon() {
  return (
    <svg {...svg} width={16} height={16} className="bubble-check" aria-hidden="true">
      <path d="M2 12l5 5L17 7M11 16l1 1L22 7" />
    </svg>
  );
}

function GroupIcon() {
  return (
    <svg {...svg} width={20} height={20} aria-hidden="true">
      <circle cx="9" cy="8" r="3.5" />
      <path d="M2.5 20c0-3.6 2.9-6 6.5-6s6.5 2.4 6.5 6" />
      <path d="M16 4.5a3.5 3.5 0 0 1 0 7M18 14.3c2.1.7 3.5 2.8 3.5 5.7" />
    </svg>
  );
}
