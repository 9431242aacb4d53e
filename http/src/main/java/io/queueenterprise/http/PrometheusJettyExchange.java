package io.queueenterprise.http;

import io.prometheus.metrics.exporter.common.PrometheusHttpExchange;
import io.prometheus.metrics.exporter.common.PrometheusHttpRequest;
import io.prometheus.metrics.exporter.common.PrometheusHttpResponse;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Collections;
import java.util.Enumeration;

/** A Jetty request/response as the Prometheus client's scrape handler takes it (its adapter point for servers). */
public final class PrometheusJettyExchange implements PrometheusHttpExchange, PrometheusHttpRequest, PrometheusHttpResponse {
    private final Request request;
    private final Response response;
    private final Callback callback;
    private OutputStream body;
    /** Failed or completed: the scrape handler closes the exchange itself, and so does the try block around it. */
    private boolean done;

    public PrometheusJettyExchange(Request request, Response response, Callback callback) {
        this.request = request;
        this.response = response;
        this.callback = callback;
    }

    @Override
    public PrometheusHttpRequest getRequest() {
        return this;
    }

    @Override
    public PrometheusHttpResponse getResponse() {
        return this;
    }

    @Override
    public String getQueryString() {
        return request.getHttpURI().getQuery();
    }

    @Override
    public Enumeration<String> getHeaders(String name) {
        return Collections.enumeration(request.getHeaders().getValuesList(name));
    }

    @Override
    public String getMethod() {
        return request.getMethod();
    }

    @Override
    public String getRequestPath() {
        return request.getHttpURI().getDecodedPath();
    }

    @Override
    public void setHeader(String name, String value) {
        response.getHeaders().put(name, value);
    }

    @Override
    public OutputStream sendHeadersAndGetBody(int statusCode, int contentLength) {
        response.setStatus(statusCode);
        if (contentLength > 0) {
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, contentLength);
        }
        body = Content.Sink.asOutputStream(response);
        return body;
    }

    @Override
    public void handleException(IOException e) throws IOException {
        done = true;
        callback.failed(e);
        throw e;
    }

    @Override
    public void handleException(RuntimeException e) {
        done = true;
        if (body == null) {
            HardenedHttpServer.sendText(response, callback, 500, "scrape failed: " + e);
        } else {
            callback.failed(e);
        }
    }

    @Override
    public void close() {
        if (done) {
            return;
        }
        done = true;
        try {
            if (body == null) {
                body = Content.Sink.asOutputStream(response);
            }
            body.close(); // the last write: completes the response
            callback.succeeded();
        } catch (IOException e) {
            callback.failed(e);
        }
    }
}
