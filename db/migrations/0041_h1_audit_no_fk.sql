ALTER TABLE "audit_log" DROP CONSTRAINT "audit_log_tenant_id_tenants_id_fk";
