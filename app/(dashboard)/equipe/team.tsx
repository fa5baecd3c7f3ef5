"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { CopyButton, ErrorAlert, PageHeader, QueryTable } from "../../_components/ui";
import { formatDateTime } from "../../_lib/format";
import { type RouterOutputs, useTRPC } from "../../_lib/trpc";
import { useSessionRole } from "../role-context";

/** docs/team.md#roles, in the dashboard's words. */
export const roleLabels = { owner: "Proprietário", admin: "Administrador", editor: "Editor", viewer: "Leitor" } as const;
type Role = keyof typeof roleLabels;

/** The Equipe page (owner/admin; docs/team.md): invite by e-mail and role (a link to copy), members, pending invitations. */
export function Team() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const me = useSessionRole();
  const team = useQuery(trpc.members.list.queryOptions());
  const refresh = () => queryClient.invalidateQueries(trpc.members.list.queryFilter());
  const [link, setLink] = useState<string>();
  const invite = useMutation(
    trpc.members.invite.mutationOptions({
      onSuccess: (inv) => {
        setLink(`${window.location.origin}${inv.path}`);
        void refresh();
      },
    }),
  );
  const revoke = useMutation(trpc.members.revokeInvitation.mutationOptions({ onSuccess: () => void refresh() }));
  const grantable = (Object.keys(roleLabels) as Role[]).filter((r) => r !== "owner" || me.role === "owner");

  function onInvite(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    invite.mutate({ email: String(form.get("email")), role: String(form.get("role")) as Role });
  }

  return (
    <>
      <PageHeader title="Equipe" description="Convide pessoas para esta conta e escolha o que cada uma pode fazer." />

      <section className="card">
        <h2>Convidar</h2>
        <form className="row" onSubmit={onInvite}>
          <label className="field grow">
            <span>E-mail</span>
            <input name="email" type="email" required maxLength={254} />
          </label>
          <label className="field">
            <span>Papel</span>
            <select name="role" defaultValue="editor">
              {grantable.map((r) => (
                <option key={r} value={r}>
                  {roleLabels[r]}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" className="btn btn-primary" disabled={invite.isPending}>
            Gerar convite
          </button>
        </form>
        <ErrorAlert error={invite.error} />
        {link && (
          <div className="field">
            <label htmlFor="invitation-link">Link do convite (válido por 7 dias, uso único)</label>
            <div className="row">
              <input id="invitation-link" className="mono grow" readOnly value={link} onFocus={(e) => e.currentTarget.select()} />
              <CopyButton text={link} label="Copiar link" />
            </div>
          </div>
        )}
      </section>

      <section className="card">
        <h2>Membros</h2>
        <QueryTable
          query={{ isPending: team.isPending, error: team.error, data: team.data?.members }}
          empty="Nenhum membro."
          columns={["Nome", "E-mail", "Papel", "Desde", null]}
        >
          {(rows) => rows.map((m) => <MemberRow key={m.userId} member={m} myRole={me.role} isMe={m.userId === me.userId} onChange={refresh} />)}
        </QueryTable>
      </section>

      <section className="card">
        <h2>Convites pendentes</h2>
        <QueryTable
          query={{ isPending: team.isPending, error: team.error, data: team.data?.invitations }}
          empty="Nenhum convite pendente."
          columns={["E-mail", "Papel", "Expira em", null]}
        >
          {(rows) =>
            rows.map((inv) => (
              <tr key={inv.id}>
                <td>{inv.email}</td>
                <td>{roleLabels[inv.role]}</td>
                <td>{formatDateTime(inv.expiresAt)}</td>
                <td className="actions">
                  <button type="button" className="btn btn-ghost-danger" disabled={revoke.isPending} onClick={() => revoke.mutate({ id: inv.id })}>
                    Revogar
                  </button>
                </td>
              </tr>
            ))
          }
        </QueryTable>
        <ErrorAlert error={revoke.error} />
      </section>
    </>
  );
}

function MemberRow({
  member: m,
  myRole,
  isMe,
  onChange,
}: {
  member: RouterOutputs["members"]["list"]["members"][number];
  myRole: Role;
  isMe: boolean;
  onChange: () => void;
}) {
  const trpc = useTRPC();
  const changeRole = useMutation(trpc.members.changeRole.mutationOptions({ onSuccess: onChange }));
  const remove = useMutation(trpc.members.remove.mutationOptions({ onSuccess: onChange }));
  // Nobody changes themselves; only an owner touches an owner (the server holds both rules).
  const editable = !isMe && (m.role !== "owner" || myRole === "owner");
  return (
    <tr>
      <td>{m.name}</td>
      <td>{m.email}</td>
      <td>
        {editable ? (
          <select
            aria-label={`Papel de ${m.email}`}
            value={m.role}
            disabled={changeRole.isPending}
            onChange={(e) => changeRole.mutate({ userId: m.userId, role: e.target.value as Role })}
          >
            {(Object.keys(roleLabels) as Role[])
              .filter((r) => r !== "owner" || myRole === "owner")
              .map((r) => (
                <option key={r} value={r}>
                  {roleLabels[r]}
                </option>
              ))}
          </select>
        ) : (
          roleLabels[m.role]
        )}
        <ErrorAlert error={changeRole.error ?? remove.error} />
      </td>
      <td>{formatDateTime(m.joinedAt)}</td>
      <td className="actions">
        {editable && (
          <button type="button" className="btn btn-ghost-danger" disabled={remove.isPending} onClick={() => remove.mutate({ userId: m.userId })}>
            Remover
          </button>
        )}
      </td>
    </tr>
  );
}
