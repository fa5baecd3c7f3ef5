"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { EmptyState, ErrorAlert, Field, Loading, PageHeader, StatusBadge } from "../../../_components/ui";
import { useTRPC } from "../../../_lib/trpc";
import { groupNameFor, parseNumbers } from "../labels";
import { emptyMetaDraft, MetaFields } from "../meta-fields";

const httpsPattern = "https://.+";
const httpsTitle = "Use um endereço que comece com https://";

/** Whole numbers from a number input; an empty field keeps the default. */
const int = (value: string, fallback: number) => (value.trim() === "" ? fallback : Math.trunc(Number(value)));

export function NewLaunch() {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const channels = useQuery(trpc.channels.list.queryOptions());

  const [name, setName] = useState("");
  const [slug, setSlug] = useState("");
  const [channelIds, setChannelIds] = useState<string[]>([]);
  const [groupName, setGroupName] = useState("");
  const [groupNameTouched, setGroupNameTouched] = useState(false);
  const [description, setDescription] = useState("");
  const [imageUrl, setImageUrl] = useState("");
  const [adminsOnly, setAdminsOnly] = useState(true);
  const [admins, setAdmins] = useState("");
  const [capacity, setCapacity] = useState("1000");
  const [margin, setMargin] = useState("20");
  const [reserve, setReserve] = useState("1");
  const [initialGroups, setInitialGroups] = useState("1");
  const [autoCreate, setAutoCreate] = useState(true);
  const [staff, setStaff] = useState("");
  const [closedUrl, setClosedUrl] = useState("");
  const [meta, setMeta] = useState(emptyMetaDraft);

  // The group name follows the launch name until the user edits it.
  const template = groupNameTouched ? groupName : name.trim() ? `${name.trim()} #{n}` : "";
  const create = useMutation(
    trpc.launches.create.mutationOptions({
      onSuccess: async (l) => {
        await queryClient.invalidateQueries(trpc.launches.list.queryFilter());
        router.push(`/launches/${l.id_launch}`);
      },
    }),
  );

  function toggleChannel(id: string, on: boolean) {
    setChannelIds((ids) => (on ? [...ids, id] : ids.filter((x) => x !== id)));
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    create.mutate({
      name: name.trim(),
      slug: slug.trim() || undefined,
      id_channel: channelIds,
      group_template: {
        name: template.trim(),
        description: description.trim() || undefined,
        image_url: imageUrl.trim() || undefined,
        admins_only: adminsOnly,
        admins: parseNumbers(admins),
      },
      capacity: int(capacity, 1000),
      margin: int(margin, 20),
      reserve: int(reserve, 1),
      auto_create: autoCreate,
      initial_groups: int(initialGroups, 1),
      staff_numbers: parseNumbers(staff),
      closed_url: closedUrl.trim() || undefined,
      tracking: meta.pixelId.trim()
        ? {
            meta: {
              pixel_id: meta.pixelId.trim(),
              access_token: meta.accessToken.trim(),
              event_name: meta.eventName.trim() || undefined,
              test_event_code: meta.testEventCode.trim() || undefined,
            },
          }
        : undefined,
    });
  }

  const cap = int(capacity, 1000);
  const full = Math.max(0, cap - int(margin, 20));
  return (
    <>
      <nav className="breadcrumb" aria-label="Trilha">
        <Link href="/launches">Lançamentos</Link> / <span>Novo lançamento</span>
      </nav>
      <PageHeader title="Novo lançamento" description="Um link de entrada que distribui as pessoas entre os grupos e cria novos grupos conforme eles enchem." />
      <form className="stack" onSubmit={onSubmit}>
        <section className="card">
          <h2>1. Lançamento</h2>
          <div className="form-grid">
            <Field label="Nome do lançamento" hint="Aparece na prévia do link e dá nome ao segmento do lançamento.">
              {(c) => <input {...c} value={name} onChange={(e) => setName(e.target.value)} required maxLength={120} placeholder="Ex.: Turma 7" />}
            </Field>
            <Field
              label={
                <>
                  Endereço do link <small className="muted">(opcional)</small>
                </>
              }
              hint="Letras minúsculas, números e hífen. Sem ele, o endereço vem do nome."
            >
              {(c) => (
                <input
                  {...c}
                  value={slug}
                  onChange={(e) => setSlug(e.target.value.toLowerCase())}
                  pattern="[a-z0-9\-]{3,60}"
                  title="De 3 a 60 letras minúsculas, números ou hífen"
                  maxLength={60}
                  placeholder="turma-7"
                />
              )}
            </Field>
          </div>
        </section>

        <section className="card">
          <fieldset>
            <legend>
              <h2>2. Canais</h2>
            </legend>
            <p className="muted small">Os números que criam e administram os grupos. Um grupo novo é criado pelo primeiro canal conectado, na ordem marcada.</p>
            {channels.isPending ? (
              <Loading />
            ) : channels.error ? (
              <ErrorAlert error={channels.error} />
            ) : channels.data.length === 0 ? (
              <EmptyState>
                Você ainda não tem canais. <Link href="/channels">Crie um canal</Link> primeiro.
              </EmptyState>
            ) : (
              <ul className="check-list">
                {channels.data.map((c) => (
                  <li key={c.id_channel}>
                    <label className="check">
                      <input type="checkbox" checked={channelIds.includes(c.id_channel)} onChange={(e) => toggleChannel(c.id_channel, e.target.checked)} />
                      {c.name}
                      {channelIds.includes(c.id_channel) && channelIds.length > 1 && (
                        <small className="muted"> ({channelIds.indexOf(c.id_channel) + 1}º)</small>
                      )}
                    </label>{" "}
                    <StatusBadge status={c.status} />
                  </li>
                ))}
              </ul>
            )}
          </fieldset>
        </section>

        <section className="card">
          <h2>3. Modelo dos grupos</h2>
          <div className="stack">
            <div className="form-grid">
              <Field
                label="Nome dos grupos"
                hint={
                  <>
                    <code>{"{n}"}</code> vira o número do grupo
                    {template.includes("{n}") && (
                      <>
                        : <strong>{groupNameFor(template, 1)}</strong>, <strong>{groupNameFor(template, 2)}</strong>…
                      </>
                    )}
                  </>
                }
              >
                {(c) => (
                  <input
                    {...c}
                    value={template}
                    onChange={(e) => {
                      setGroupNameTouched(true);
                      setGroupName(e.target.value);
                    }}
                    required
                    maxLength={100}
                    placeholder="Turma 7 #{n}"
                  />
                )}
              </Field>
              <Field
                label={
                  <>
                    URL da foto <small className="muted">(opcional)</small>
                  </>
                }
                hint="Foto dos grupos e imagem da prévia do link."
              >
                {(c) => (
                  <input
                    {...c}
                    type="url"
                    value={imageUrl}
                    onChange={(e) => setImageUrl(e.target.value)}
                    pattern={httpsPattern}
                    title={httpsTitle}
                    maxLength={2048}
                    placeholder="https://exemplo.com.br/foto.jpg"
                  />
                )}
              </Field>
            </div>
            <Field
              label={
                <>
                  Descrição <small className="muted">(opcional)</small>
                </>
              }
              hint="Descrição dos grupos e texto da prévia do link."
            >
              {(c) => <textarea {...c} value={description} onChange={(e) => setDescription(e.target.value)} rows={3} maxLength={2048} />}
            </Field>
            <label className="check spaced">
              <input type="checkbox" checked={adminsOnly} onChange={(e) => setAdminsOnly(e.target.checked)} />
              Só administradores enviam mensagens
            </label>
            <Field
              label={
                <>
                  Administradores <small className="muted">(opcional)</small>
                </>
              }
              hint="Números com DDI e DDD, um por linha: promovidos a administradores em todos os grupos."
            >
              {(c) => <textarea {...c} value={admins} onChange={(e) => setAdmins(e.target.value)} rows={2} placeholder="5511999990001" />}
            </Field>
          </div>
        </section>

        <section className="card">
          <h2>4. Lotação</h2>
          <div className="form-grid three">
            <Field label="Capacidade por grupo" hint="Até 1024 pessoas.">
              {(c) => <input {...c} type="number" min={1} max={1024} value={capacity} onChange={(e) => setCapacity(e.target.value)} required />}
            </Field>
            <Field label="Margem" hint={`O grupo conta como cheio em ${full} membros; a margem fica para quem entra atrasado.`}>
              {(c) => <input {...c} type="number" min={0} max={200} value={margin} onChange={(e) => setMargin(e.target.value)} required />}
            </Field>
            <Field label="Grupos de reserva" hint="Criados antes de precisar, quando o grupo atual passa de 80%.">
              {(c) => <input {...c} type="number" min={0} max={5} value={reserve} onChange={(e) => setReserve(e.target.value)} required />}
            </Field>
            <Field label="Grupos criados agora" hint="Os demais são criados conforme os grupos enchem.">
              {(c) => <input {...c} type="number" min={0} max={20} value={initialGroups} onChange={(e) => setInitialGroups(e.target.value)} required />}
            </Field>
          </div>
          <label className="check spaced">
            <input type="checkbox" checked={autoCreate} onChange={(e) => setAutoCreate(e.target.checked)} />
            Criar grupos novos automaticamente
          </label>
        </section>

        <section className="card">
          <h2>5. Equipe e link encerrado</h2>
          <div className="form-grid">
            <Field
              label={
                <>
                  Números da equipe <small className="muted">(opcional)</small>
                </>
              }
              hint="Um por linha. Não contam como leads nas entradas e saídas."
            >
              {(c) => <textarea {...c} value={staff} onChange={(e) => setStaff(e.target.value)} rows={2} placeholder="5511999990002" />}
            </Field>
            <Field
              label={
                <>
                  Link quando encerrado <small className="muted">(opcional)</small>
                </>
              }
              hint="Para onde o link leva quando o lançamento está pausado ou encerrado. Sem ele, uma página avisa que os grupos fecharam."
            >
              {(c) => (
                <input
                  {...c}
                  type="url"
                  value={closedUrl}
                  onChange={(e) => setClosedUrl(e.target.value)}
                  pattern={httpsPattern}
                  title={httpsTitle}
                  maxLength={2048}
                  placeholder="https://exemplo.com.br/lista-de-espera"
                />
              )}
            </Field>
          </div>
        </section>

        <section className="card">
          <h2>
            6. API de Conversões da Meta <small className="muted">(opcional)</small>
          </h2>
          <p className="muted small">
            O pixel não dispara num redirecionamento: com o pixel preenchido, cada clique contado no link envia um evento (Lead) do servidor para a Meta, sem
            atrasar o redirecionamento.
          </p>
          <MetaFields draft={meta} onChange={setMeta} />
        </section>

        <ErrorAlert error={create.error} />
        <div className="row">
          <button className="btn btn-primary" type="submit" disabled={create.isPending || channelIds.length === 0 || !name.trim()}>
            {create.isPending ? "Criando…" : "Criar lançamento"}
          </button>
          <Link href="/launches" className="btn btn-ghost">
            Cancelar
          </Link>
        </div>
      </form>
    </>
  );
}
