// The reference values of acl_signer_test.cc, computed by RocketMQ's own Java
// client (AclClientRPCHook from rocketmq-client 5.3.3, the jar
// scripts/install-rocketmq.sh puts into its lib folder). Not built by CMake;
// to recompute:
//
//   LIB="$(scripts/install-rocketmq.sh)/lib"
//   javac -d /tmp/acl-ref -cp "$LIB/*" tests/rocketmq/remoting/AclSignatureReference.java
//   java -cp "$LIB/*:/tmp/acl-ref" AclSignatureReference 2>/dev/null | grep '^case'

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

public class AclSignatureReference {
    static void sign(String name, RemotingCommand request) {
        new AclClientRPCHook(new SessionCredentials("center-ak", "center-secret-1234"))
            .doBeforeRequest("127.0.0.1:10911", request);
        System.out.println("case " + name + " " + request.getExtFields());
    }

    public static void main(String[] args) {
        // A SEND_MESSAGE_V2-like request: ext fields and a UTF-8 body.
        RemotingCommand send = RemotingCommand.createRequestCommand(310, null);
        HashMap<String, String> fields = new HashMap<>();
        fields.put("a", "export-center-publisher");
        fields.put("b", "test-export-center-command-v1");
        fields.put("e", "3");
        fields.put("i", "TAGS\u0001export\u0002");
        send.setExtFields(fields);
        send.setBody("{\"taskId\":\"42\",\"名\":\"値\"}".getBytes(StandardCharsets.UTF_8));
        sign("send", send);
        // GET_BROKER_CLUSTER_INFO: no ext fields, no body (only the AccessKey is signed).
        sign("no-fields-no-body", RemotingCommand.createRequestCommand(106, null));
        // HEART_BEAT: a body and no ext fields.
        RemotingCommand heartbeat = RemotingCommand.createRequestCommand(34, null);
        heartbeat.setBody("{\"clientID\":\"1\"}".getBytes(StandardCharsets.UTF_8));
        sign("body-only", heartbeat);
    }
}
