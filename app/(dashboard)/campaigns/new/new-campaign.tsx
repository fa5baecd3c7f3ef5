"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useState, type FormEvent, type KeyboardEvent } from "react";
import { campaignLimits } from "../../../../server/campaigns/limits";
import { EmptyState, ErrorAlert, Field, Loading, PageHeader } from "../../../_components/ui";
import { brasiliaParts } from "../../../../server/time/brasilia";
import { describeSchedule, isFutureInBrasilia, suggestedSchedule, toScheduledAt } from "../../../_lib/brasilia-time";
import { useTRPC } from "../../../_lib/trpc";
import { CardsEditor } from "./cards-editor";
import { campaignKinds, emptyCard, emptyPollOption, type CampaignKind, type MessageDraft } from "./draft";
import { PollEditor, repeatsAnOption } from "./poll-editor";
import { PhonePreview } from "./phone-preview";
import { defaultRepeat, RepeatFields, toRepeat, type RepeatDraft } from "./repeat-fields";
import { TestSendResults } from "./test-send-results";
import { previewValues, VariationsPreview } from "./variations-preview";
import { renderNth } from "../../../../server/dispatch/variations";
import { nameMaxLength, urlMaxLength } from "../../../../server/text-limits";

const httpsPattern = "https://.+";
const httpsTitle = "Use um endereço que comece com https://";

const mediaLabels: Record<Exclude<CampaignKind, "text" | "carousel" | "poll">, { url: string; placeholder: string }> = {
  image: { url: "URL da imagem", placeholder: "https://exemplo.com.br/imagens/promo.jpg" },
  video: { url: "URL do vídeo", placeholder: "https://exemplo.com.br/videos/aula.mp4" },
  audio: { url: "URL do áudio", placeholder: "https://exemplo.com.br/audios/recado.ogg" },
  document: { url: "URL do documento", placeholder: "https://exemplo.com.br/materiais/apostila.pdf" },
};

const linkPreviewModeText: Record<string, string> = {
  always: "As Configurações mandam mostrar sempre a prévia dos links.",
  never: "As Configurações mandam nunca mostrar a prévia dos links.",
};

export function NewCampaign() {
  const trpc = useTRPC();
  const router = useRouter();
  const searchParams = useSearchParams();
  const queryClient = useQueryClient();
  const segments = useQuery(trpc.segments.list.queryOptions());
  const settings = useQuery(trpc.settings.get.queryOptions());
  const platform = useQuery(trpc.channels.platform.queryOptions());

  const [name, setName] = useState("");
  // A launch's page links here with its segment chosen (`?segment=`).
  const [segmentId, setSegmentId] = useState(() => searchParams.get("segment") ?? "");
  const [draft, setDraft] = useState<MessageDraft>(() => ({
    kind: "text",
    message: "",
    media_url: "",
    file_name: "",
    cards: [emptyCard()],
    mention_all: false,
    link_preview: true,
    poll_options: [emptyPollOption(), emptyPollOption()],
    multiple_answers: false,
  }));
  const [when, setWhen] = useState<"now" | "scheduled" | "repeat">("now");
  const [repeat, setRepeat] = useState<RepeatDraft>(() => defaultRepeat(new Date()));
  const [date, setDate] = useState("");
  const [time, setTime] = useState("");

  const onCreated = async ({ id_campaign, id_series }: { id_campaign: string; id_series: string | null }) => {
    await queryClient.invalidateQueries(trpc.campaigns.list.queryFilter());
    await queryClient.invalidateQueries(trpc.series.list.queryFilter());
    // A series (Repetir): the series list shows it (its first run is a scheduled campaign in the list below it).
    router.push(id_series ? "/campaigns#series" : `/campaigns/${id_campaign}`);
  };
  const createMessage = useMutation(trpc.campaigns.createMessage.mutationOptions({ onSuccess: onCreated }));
  const createCarousel = useMutation(trpc.campaigns.createCarousel.mutationOptions({ onSuccess: onCreated }));
  const createPoll = useMutation(trpc.campaigns.createPoll.mutationOptions({ onSuccess: onCreated }));
  const pending = createMessage.isPending || createCarousel.isPending || createPoll.isPending;
  const isPoll = draft.kind === "poll";
  const pollRepeats = isPoll && repeatsAnOption(draft.poll_options);
  const sendTest = useMutation(trpc.campaigns.sendTest.mutationOptions());

  const update = (patch: Partial<MessageDraft>) => setDraft((d) => ({ ...d, ...patch }));
  const segment = segments.data?.find((s) => s.id_segment === segmentId);
  const previewMode = settings.data?.settings.preferences.link_preview_mode ?? "ask_always";
  const linkPreview = previewMode === "always" || (previewMode === "ask_always" && draft.link_preview);
  // Link previews exist for text: a plain message or the carousel's message.
  const hasLinks = draft.kind === "text" || draft.kind === "carousel";
  const scheduled = when === "scheduled" && date && time;
  const scheduleInPast = scheduled ? !isFutureInBrasilia(date, time, new Date()) : false;
  const nowInBrasilia = brasiliaParts(new Date());

  function chooseWhen(value: "now" | "scheduled" | "repeat") {
    setWhen(value);
    if (value === "scheduled" && !date) {
      const s = suggestedSchedule(new Date());
      setDate(s.date);
      setTime(s.time);
    }
  }

  /** The message as the API takes it (create-campaign/message or /carousel, and send-test), without name, segment and time. */
  function messageBody() {
    const options = {
      mention_all: draft.mention_all,
      // Only asked when the account leaves the choice to each campaign.
      link_preview: previewMode === "ask_always" && hasLinks ? draft.link_preview : undefined,
    };
    if (draft.kind === "carousel") {
      const carousel_data = {
        message: draft.message,
        cards: draft.cards.map((c) => ({
          image_url: c.image_url.trim(),
          text: c.text.trim(),
          buttons: c.buttons.map((b) => ({ label: b.label.trim(), type: "URL" as const, url: b.url.trim() })),
        })),
      };
      return { kind: "carousel" as const, ...options, carousel_data };
    }
    return {
      kind: "message" as const,
      ...options,
      // A poll is created by createPoll and never test-sent (send-test takes a message or a carousel).
      message_type: draft.kind as Exclude<CampaignKind, "carousel" | "poll">,
      message: draft.kind === "audio" ? "" : draft.message,
      media_url: draft.kind === "text" ? undefined : draft.media_url.trim(),
      file_name: draft.kind === "document" && draft.file_name.trim() ? draft.file_name.trim() : undefined,
    };
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    if (scheduleInPast || pollRepeats || (when === "repeat" && repeat.days.length === 0)) return;
    createMessage.reset();
    createCarousel.reset();
    createPoll.reset();
    const common = {
      name: name.trim(),
      id_segment: segmentId,
      scheduled_at: scheduled ? toScheduledAt(date, time) : undefined,
      repeat: when === "repeat" ? toRepeat(repeat) : undefined,
    };
    if (draft.kind === "poll") {
      createPoll.mutate({
        ...common,
        poll: { question: draft.message.trim(), options: draft.poll_options.map((o) => o.text.trim()), multiple_answers: draft.multiple_answers },
      });
      return;
    }
    const body = messageBody();
    if (body.kind === "carousel") {
      const { kind, ...carousel } = body;
      createCarousel.mutate({ ...common, ...carousel });
    } else {
      const { kind, ...message } = body;
      createMessage.mutate({ ...common, ...message });
    }
  }

  /** "Enviar teste": the message now to the account's test groups (with the segment chosen: as its first groups would get it). */
  function onSendTest() {
    const { kind, ...body } = messageBody();
    sendTest.mutate({ ...body, id_segment: segmentId || undefined });
  }

  function onTabKey(e: KeyboardEvent<HTMLButtonElement>) {
    const i = campaignKinds.findIndex((k) => k.kind === draft.kind);
    const step = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
    if (!step) return;
    e.preventDefault();
    const next = campaignKinds[(i + step + campaignKinds.length) % campaignKinds.length];
    update({ kind: next.kind });
    document.getElementById(`kind-tab-${next.kind}`)?.focus();
  }

  if (segments.isPending) return <Loading />;
  if (segments.error) return <ErrorAlert error={segments.error} />;

  return (
    <>
      <nav className="breadcrumb" aria-label="Trilha">
        <Link href="/campaigns">Campanhas</Link> / <span>Nova campanha</span>
      </nav>
      <PageHeader
        title="Nova campanha"
        description="Escreva a mensagem, escolha o segmento e quando enviar. A prévia ao lado mostra como os grupos vão recebê-la."
      />
      {segments.data.length === 0 ? (
        <EmptyState>
          Você ainda não tem segmentos. <Link href="/segments/new">Crie um segmento</Link> para escolher os grupos que recebem a campanha.
        </EmptyState>
      ) : (
        <div className="composer">
          <form className="stack" onSubmit={onSubmit}>
            <section className="card">
              <h2>1. Campanha</h2>
              <div className="form-grid">
                <Field label="Nome da campanha" hint="Só você vê este nome.">
                  {(c) => (
                    <input
                      {...c}
                      value={name}
                      onChange={(e) => setName(e.target.value)}
                      required
                      maxLength={nameMaxLength}
                      placeholder="Ex.: Abertura do carrinho"
                    />
                  )}
                </Field>
                <Field
                  label="Segmento"
                  hint={
                    segment?.monitoring_group
                      ? `Uma cópia vai para o grupo de monitoramento ${segment.monitoring_group.name}.`
                      : "Os grupos do segmento recebem a mensagem."
                  }
                >
                  {(c) => (
                    <select {...c} value={segmentId} onChange={(e) => setSegmentId(e.target.value)} required>
                      <option value="" disabled>
                        Escolha um segmento
                      </option>
                      {segmentGroupsOf(segments.data).map(({ label, list }) => (
                        <optgroup key={label} label={label}>
                          {list.map((s) => (
                            <option key={s.id_segment} value={s.id_segment}>
                              {s.name} ({s.total_groups} {s.total_groups === 1 ? "grupo" : "grupos"})
                            </option>
                          ))}
                        </optgroup>
                      ))}
                    </select>
                  )}
                </Field>
              </div>
            </section>

            <section className="card">
              <h2>2. Mensagem</h2>
              <div className="tabs" role="tablist" aria-label="Tipo de mensagem">
                {campaignKinds.map((k) => (
                  <button
                    key={k.kind}
                    id={`kind-tab-${k.kind}`}
                    type="button"
                    role="tab"
                    aria-selected={draft.kind === k.kind}
                    aria-controls="kind-panel"
                    tabIndex={draft.kind === k.kind ? 0 : -1}
                    className={draft.kind === k.kind ? "tab active" : "tab"}
                    onClick={() => update({ kind: k.kind })}
                    onKeyDown={onTabKey}
                  >
                    {k.label}
                  </button>
                ))}
              </div>
              <div id="kind-panel" role="tabpanel" aria-labelledby={`kind-tab-${draft.kind}`} className="stack tab-panel">
                {draft.kind !== "text" && draft.kind !== "carousel" && draft.kind !== "poll" && (
                  <Field label={mediaLabels[draft.kind].url} hint="Endereço público (https) de onde o arquivo será baixado no envio.">
                    {(c) => (
                      <input
                        {...c}
                        type="url"
                        value={draft.media_url}
                        onChange={(e) => update({ media_url: e.target.value })}
                        required
                        maxLength={urlMaxLength}
                        pattern={httpsPattern}
                        title={httpsTitle}
                        placeholder={mediaLabels[draft.kind as keyof typeof mediaLabels].placeholder}
                      />
                    )}
                  </Field>
                )}
                {draft.kind === "document" && (
                  <Field
                    label={
                      <>
                        Nome do arquivo <small className="muted">(opcional)</small>
                      </>
                    }
                    hint="Como o documento aparece para os participantes. Sem ele, vale o nome do arquivo na URL."
                  >
                    {(c) => (
                      <input
                        {...c}
                        value={draft.file_name}
                        onChange={(e) => update({ file_name: e.target.value })}
                        maxLength={campaignLimits.fileName}
                        placeholder="Ex.: Apostila - módulo 1.pdf"
                      />
                    )}
                  </Field>
                )}
                {draft.kind === "audio" ? (
                  <p className="muted small">Áudios são enviados sem legenda.</p>
                ) : (
                  <Field
                    label={
                      <>
                        {draft.kind === "text" ? "Mensagem" : draft.kind === "carousel" ? "Mensagem acima dos cartões" : isPoll ? "Pergunta" : "Legenda"}
                        {draft.kind !== "text" && !isPoll && <small className="muted"> (opcional)</small>}
                      </>
                    }
                    hint={
                      isPoll ? (
                        `Até ${campaignLimits.poll.question} caracteres.${draft.message.length > 0 ? ` ${draft.message.length} caracteres.` : ""}`
                      ) : (
                        <>Use *negrito*, _itálico_ e ~riscado~. {draft.message.length > 0 && `${draft.message.length} caracteres.`}</>
                      )
                    }
                  >
                    {(c) => (
                      <textarea
                        {...c}
                        value={draft.message}
                        onChange={(e) => update({ message: e.target.value })}
                        required={draft.kind === "text" || isPoll}
                        maxLength={isPoll ? campaignLimits.poll.question : draft.kind === "carousel" ? campaignLimits.carousel.message : campaignLimits.message}
                        rows={draft.kind === "text" ? 6 : isPoll ? 2 : 3}
                        placeholder={
                          draft.kind === "text"
                            ? "Olá! As inscrições abrem hoje às 20h: https://…"
                            : isPoll
                              ? "Ex.: Qual o melhor dia para a aula ao vivo?"
                              : undefined
                        }
                      />
                    )}
                  </Field>
                )}
                {draft.kind !== "audio" && <VariationsPreview text={draft.message} label="Mensagem" />}
                {draft.kind === "audio" || (
                  <p className="muted small hint">
                    Variações: <code>{"{Olá|Oi|E aí}"}</code> escolhe uma opção por grupo; <code>{"{{grupo}}"}</code> é o nome do grupo,{" "}
                    <code>{"{{data}}"}</code> e <code>{"{{hora}}"}</code> a data e a hora do envio.
                  </p>
                )}
                {draft.kind === "carousel" && platform.data && !platform.data.capabilities.carousel && (
                  <p className="alert alert-warning" role="note">
                    O WhatsApp não entrega carrosséis em grupos por este gateway: cada cartão sai como uma imagem, na ordem, com o texto do cartão e os links
                    dos botões na legenda (a mensagem acima dos cartões abre a primeira legenda).
                  </p>
                )}
                {isPoll && (
                  <PollEditor
                    options={draft.poll_options}
                    multipleAnswers={draft.multiple_answers}
                    maxOptions={Math.min(campaignLimits.poll.maxOptions, platform.data?.capabilities.pollOptions ?? campaignLimits.poll.maxOptions)}
                    onChange={update}
                  />
                )}
                {draft.kind === "carousel" && (
                  <CardsEditor cards={draft.cards} onChange={(cards) => update({ cards })} httpsPattern={httpsPattern} httpsTitle={httpsTitle} />
                )}
                {draft.kind === "carousel" && draft.cards.map((c, i) => <VariationsPreview key={c.key} text={c.text} label={`Texto do cartão ${i + 1}`} />)}
              </div>
            </section>

            <section className="card">
              <h2>3. Opções</h2>
              <div className="stack">
                {isPoll ? (
                  <p className="muted small hint">Enquetes vão sem menção a todos.</p>
                ) : (
                  <>
                    <label className="check">
                      <input type="checkbox" checked={draft.mention_all} onChange={(e) => update({ mention_all: e.target.checked })} />
                      Mencionar todos
                    </label>
                    <p className="muted small hint">Notifica todos os participantes do grupo, sem escrever @nomes no texto.</p>
                  </>
                )}
                {hasLinks && (
                  <>
                    <label className="check">
                      <input
                        type="checkbox"
                        checked={linkPreview}
                        disabled={previewMode !== "ask_always"}
                        onChange={(e) => update({ link_preview: e.target.checked })}
                      />
                      Prévia de links
                    </label>
                    <p className="muted small hint">
                      {linkPreviewModeText[previewMode] ?? "Mostra título e imagem do primeiro link da mensagem."}{" "}
                      {previewMode !== "ask_always" && <Link href="/settings">Alterar nas Configurações</Link>}
                    </p>
                  </>
                )}
              </div>
            </section>

            <section className="card">
              <fieldset>
                <legend>
                  <h2>4. Envio</h2>
                </legend>
                <div className="row wrap">
                  <label className="check">
                    <input type="radio" name="when" checked={when === "now"} onChange={() => chooseWhen("now")} />
                    Enviar agora
                  </label>
                  <label className="check">
                    <input type="radio" name="when" checked={when === "scheduled"} onChange={() => chooseWhen("scheduled")} />
                    Agendar
                  </label>
                  <label className="check">
                    <input type="radio" name="when" checked={when === "repeat"} onChange={() => chooseWhen("repeat")} />
                    Repetir
                  </label>
                </div>
                {when === "repeat" && <RepeatFields value={repeat} onChange={setRepeat} />}
                {when === "scheduled" && (
                  <div className="schedule">
                    <div className="row align-end wrap">
                      <Field label="Data">
                        {(c) => <input {...c} type="date" value={date} min={nowInBrasilia.date} onChange={(e) => setDate(e.target.value)} required />}
                      </Field>
                      <Field label="Hora">{(c) => <input {...c} type="time" value={time} onChange={(e) => setTime(e.target.value)} required />}</Field>
                      <span className="badge badge-tz">Horário de Brasília</span>
                    </div>
                    <p className="muted small">
                      Datas e horas em Brasília (America/Sao_Paulo). Agora em Brasília: {describeSchedule(nowInBrasilia.date, nowInBrasilia.time)}.
                    </p>
                    {scheduled && !scheduleInPast && (
                      <p className="schedule-summary" data-testid="schedule-summary">
                        Será enviada em <strong>{describeSchedule(date, time)}</strong>, horário de Brasília.
                      </p>
                    )}
                    {scheduleInPast && (
                      <p className="alert alert-error" role="alert">
                        Escolha um horário no futuro.
                      </p>
                    )}
                  </div>
                )}
              </fieldset>
            </section>

            <ErrorAlert error={createMessage.error ?? createCarousel.error ?? createPoll.error} />
            <TestSendResults mutation={sendTest} />
            <div className="row wrap">
              <button className="btn btn-primary" type="submit" disabled={pending || scheduleInPast || pollRepeats}>
                {pending ? "Criando…" : when === "scheduled" ? "Agendar campanha" : when === "repeat" ? "Criar série" : "Criar e enviar agora"}
              </button>
              {!isPoll && (
                <button className="btn" type="button" onClick={onSendTest} disabled={sendTest.isPending}>
                  {sendTest.isPending ? "Enviando teste…" : "Enviar teste"}
                </button>
              )}
              <Link href="/campaigns" className="btn btn-ghost">
                Cancelar
              </Link>
            </div>
          </form>
          <aside className="composer-preview">
            <PhonePreview
              draft={firstVariant(draft)}
              groupName={segment?.name}
              groupCount={segment?.total_groups}
              linkPreview={linkPreview}
              scheduled={scheduled ? { label: describeSchedule(date, time), time } : undefined}
            />
          </aside>
        </div>
      )}
    </>
  );
}

/** The draft as the phone shows it: a text with variations as its first variant ("Nome do grupo" in {{grupo}}). */
function firstVariant(draft: MessageDraft): MessageDraft {
  const values = previewValues();
  const render = (text: string) => renderNth(text, 0, values);
  return { ...draft, message: render(draft.message), cards: draft.cards.map((c) => ({ ...c, text: render(c.text) })) };
}

/** The composer's segment list: the tenant's own segments, then the launches' (each follows its launch's groups). */
function segmentGroupsOf<S extends { id_launch: string | null }>(all: S[]) {
  return [
    { label: "Segmentos", list: all.filter((s) => s.id_launch === null) },
    { label: "Lançamentos", list: all.filter((s) => s.id_launch !== null) },
  ].filter((g) => g.list.length > 0);
}
